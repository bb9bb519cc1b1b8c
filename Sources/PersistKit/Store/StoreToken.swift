import Synchronization

/// A store identifier interned once per process: one token per identifier string, so object
/// keys (``ObjectKey``) name their store by the token's address and compare stores without
/// comparing strings.
///
/// Tokens live as long as the process (the table that interns them never lets go), so a key
/// may hold a token's address without retaining it. A process opens few stores; each costs
/// one small token for good.
public final class StoreToken: Sendable, CustomStringConvertible {
    /// The store identifier (`NSStoreUUID`) the token stands for.
    public let identifier: String

    /// Every token made so far, by identifier.
    private static let interned = Locked<[String: StoreToken]>([:])
    /// The address of the token last asked for (0 before any): IDs are made by the thousand
    /// from one store's identifier string, whose comparison with the token's own is then a
    /// comparison of two references to the same storage, with no lock and no hashing.
    private static let recent = Atomic<UInt>(0)

    private init(identifier: String) {
        self.identifier = identifier
    }

    /// The token of `identifier`: the same instance at every call with an equal string.
    ///
    /// Unless the identifier is the one asked for last, it takes a lock and hashes the string:
    /// prepare a token once per store (or per parsed ID prefix) and reuse it, rather than
    /// asking per object.
    public static func forIdentifier(_ identifier: String) -> StoreToken {
        let recentBits = recent.load(ordering: .acquiring)
        if recentBits != 0 {
            let token = token(bits: recentBits)
            if token.identifier == identifier { return token }
        }
        let token = interned.withLock { table in
            if let token = table[identifier] { return token }
            let token = StoreToken(identifier: identifier)
            table[identifier] = token
            return token
        }
        recent.store(token.bits, ordering: .releasing)
        return token
    }

    /// The token's address: what an ``ObjectKey`` holds (never 0).
    @inline(__always) var bits: UInt { UInt(bitPattern: ObjectIdentifier(self)) }

    /// The token whose address is `bits` (a nonzero ``bits`` of a token: tokens are never freed).
    @inline(__always) static func token(bits: UInt) -> StoreToken {
        // Force-unwrap: `bits` is the nonzero address of a live (immortal) token.
        Unmanaged<StoreToken>.fromOpaque(UnsafeRawPointer(bitPattern: bits)!).takeUnretainedValue()
    }

    /// The identifier.
    public var description: String { identifier }
}
