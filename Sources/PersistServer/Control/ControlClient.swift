import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A blocking client of persistd for `persistctl` and tests: connects to the socket, sends
/// lines, reads lines, each read bounded by a timeout.
///
/// Owns its descriptor: ``close()`` (or `deinit`) closes it once.
public final class ControlClient {
    private let descriptor: Int32
    private var framer = LineFramer(maximumLineLength: 256 << 20)
    private var isClosed = false
    private var nextID: Int64 = 1

    /// Connects to the socket at `path`; reads and writes time out after `timeout` seconds.
    /// - Throws: ``SocketError`` when the path is too long or nobody listens there.
    public init(path: String, timeout: Double = 30) throws(SocketError) {
        let address = try UnixSocketAddress(path: path)
        descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw SocketError("socket", errno: errno) }
        let status = retryingOnInterrupt { address.withSockAddr { connect(descriptor, $0, $1) } }
        guard status == 0 else {
            // Every stored property is set, so `deinit` runs when this initializer throws:
            // let it close the descriptor, once. (Closing it here too would close whatever
            // descriptor another thread opened with the same number in between.)
            throw SocketError("connect \(path)", errno: -status)
        }
        var time = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - timeout.rounded(.down)) * 1e6))
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close() }

    /// The connected socket, for a caller that waits on several clients with epoll
    /// (`persistctl bench`); it stays owned by this client.
    var fileDescriptor: Int32 { descriptor }

    /// Receives the bytes available now into `buffer` without waiting; returns their count,
    /// 0 at end of stream, `nil` when nothing is there yet. For `persistctl bench`.
    func receiveAvailable(into buffer: inout [UInt8]) throws(SocketError) -> Int? {
        let count = retryingOnInterrupt { buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) } }
        if count == -Int(EAGAIN) || count == -Int(EWOULDBLOCK) { return nil }
        if count == 0 || count == -Int(ECONNRESET) { return 0 }
        if count < 0 { throw SocketError("recv", errno: Int32(-count)) }
        return count
    }

    /// Closes the connection.
    public func close() {
        guard !isClosed else { return }
        isClosed = true
        Glibc.close(descriptor)
    }

    /// Closes the sending side: the server sees EOF, answers what it has, then closes.
    public func shutdownWrite() { shutdown(descriptor, Int32(SHUT_WR)) }

    /// Sends raw bytes.
    public func send(raw bytes: [UInt8]) throws(SocketError) {
        var offset = 0
        while offset < bytes.count {
            // The force-unwrap is safe: the loop runs only while `bytes` has unsent bytes.
            let count = retryingOnInterrupt {
                bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL)) }
            }
            guard count > 0 else { throw SocketError("send", errno: Int32(-count)) }
            offset += count
        }
    }

    /// Sends one line (a `\n` is added).
    public func send(line: String) throws(SocketError) { try send(raw: Array((line + "\n").utf8)) }

    /// Sends a request object, adding an `id` unless it has one; returns the `id`.
    @discardableResult
    public func send(_ request: JSON) throws(SocketError) -> JSON {
        let (id, line) = numbered(request)
        try send(line: line)
        return id
    }

    /// `request`'s `id` and its line (without `\n`): the request as it is when it has an `id`,
    /// else with the next number put first as its `id`.
    private func numbered(_ request: JSON) -> (id: JSON, line: String) {
        if let id = request["id"] { return (id, request.encoded) }
        let id = JSON.integer(nextID)
        nextID += 1
        return (id, JSON.object([JSON.Member("id", id)] + (request.members ?? [])).encoded)
    }

    /// The next raw line from the server (without `\n`), or `nil` at end of stream.
    public func readRawLine() throws(SocketError) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            if case .line(let line)? = framer.nextLine() { return line }
            let count = retryingOnInterrupt { buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) } }
            if count == 0 || count == -Int(ECONNRESET) { return nil }
            if count < 0 {
                if count == -Int(EAGAIN) { throw SocketError("recv", message: "no reply within the timeout") }
                throw SocketError("recv", errno: Int32(-count))
            }
            framer.append(buffer[0..<count])
        }
    }

    /// Receives the bytes available (waiting for some, up to the timeout) into `buffer`, bypassing
    /// the line framer; returns their count, 0 at end of stream. For `persistctl bench`, which
    /// does its own framing.
    func receive(into buffer: inout [UInt8]) throws(SocketError) -> Int {
        let count = retryingOnInterrupt { buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) } }
        if count == 0 || count == -Int(ECONNRESET) { return 0 }
        if count < 0 {
            if count == -Int(EAGAIN) { throw SocketError("recv", message: "no reply within the timeout") }
            throw SocketError("recv", errno: Int32(-count))
        }
        return count
    }

    /// The next line, parsed, or `nil` at end of stream.
    public func readLine() throws -> JSON? {
        guard let line = try readRawLine() else { return nil }
        return try JSONParser.parse(line)
    }

    /// Sends `request` and returns the reply with the same `id` (skipping events).
    public func request(_ request: JSON) throws -> JSON {
        try reply(to: try send(request))
    }

    /// Sends `requests` pipelined, in one write, and returns their replies in order (skipping
    /// events): the server takes them as one batch, so an `insert` followed by a `save` costs
    /// one round trip and one transaction (docs/daemon.md, "Threading model").
    public func requests(_ requests: [JSON]) throws -> [JSON] {
        var bytes: [UInt8] = []
        var ids: [JSON] = []
        for request in requests {
            let (id, line) = numbered(request)
            ids.append(id)
            bytes += Array(line.utf8)
            bytes.append(UInt8(ascii: "\n"))
        }
        try send(raw: bytes)
        return try ids.map { try reply(to: $0) }
    }

    /// The next reply, which must be the one to the request `id` (events are skipped).
    private func reply(to id: JSON) throws -> JSON {
        while let reply = try readLine() {
            if reply["event"] != nil && reply["id"] == nil { continue }
            guard reply["id"] == id else { throw SocketError("reply", message: "a reply for \(reply["id"]?.encoded ?? "?") arrived instead of \(id.encoded)") }
            return reply
        }
        throw SocketError("reply", message: "the server closed the connection")
    }
}
