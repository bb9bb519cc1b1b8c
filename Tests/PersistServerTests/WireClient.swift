import Foundation
@testable import PersistServer
#if canImport(Glibc)
import Glibc
#endif

/// A blocking Unix socket client for tests, every read bounded by a timeout.
final class WireClient {
    let descriptor: Int32
    private var framer = LineFramer(maximumLineLength: 64 << 20)
    private var isClosed = false
    private var nextID: Int64 = 1

    /// Connects to `path`; reads time out after `timeout` seconds.
    init(path: String, timeout: Double = 10) throws {
        descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in path.utf8.enumerated() { buffer[index] = byte }
        }
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard status == 0 else {
            let failure = errno
            Glibc.close(descriptor)
            throw HarnessError("connect \(path): \(String(cString: strerror(failure)))")
        }
        var time = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - timeout.rounded(.down)) * 1e6))
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close() }

    func close() {
        guard !isClosed else { return }
        isClosed = true
        Glibc.close(descriptor)
    }

    /// Closes the sending side: the server sees EOF but may still answer.
    func shutdownWrite() { shutdown(descriptor, Int32(SHUT_WR)) }

    /// Sends raw bytes.
    func send(raw bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { throw HarnessError("send: \(String(cString: strerror(errno)))") }
            offset += count
        }
    }

    /// Sends a text line (a `\n` is added).
    func send(line: String) throws { try send(raw: Array((line + "\n").utf8)) }

    /// Sends a request object (the `id` is added unless given).
    @discardableResult
    func send(_ request: JSON) throws -> JSON {
        var members = request.members ?? []
        var id = request["id"]
        if id == nil {
            id = .integer(nextID)
            nextID += 1
            members.insert(JSON.Member("id", id!), at: 0)
        }
        try send(line: JSON.object(members).encoded)
        return id!
    }

    /// The next line from the server, parsed; `nil` at EOF.
    func readLine() throws -> JSON? {
        guard let line = try readRawLine() else { return nil }
        return try JSONParser.parse(line)
    }

    /// The next raw line (without `\n`); `nil` at EOF.
    func readRawLine() throws -> [UInt8]? {
        while true {
            if case .line(let line)? = framer.nextLine() { return line }
            var buffer = [UInt8](repeating: 0, count: 65536)
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count == 0 { return nil }
            if count < 0 {
                if errno == EINTR { continue }
                if errno == ECONNRESET { return nil }
                throw HarnessError("recv: \(String(cString: strerror(errno))) (timed out?)")
            }
            framer.append(buffer[0..<count])
        }
    }

    /// Sends `request` and returns the reply, checking it carries the same `id`.
    func request(_ request: JSON) throws -> JSON {
        let id = try send(request)
        guard let reply = try readLine() else { throw HarnessError("EOF instead of a reply") }
        guard reply["id"] == id else { throw HarnessError("reply \(reply.encoded) does not carry id \(id.encoded)") }
        return reply
    }

    /// Sends `request` and returns its `result`; throws if the reply is an error.
    func result(_ request: JSON) throws -> JSON {
        let reply = try self.request(request)
        guard reply["ok"] == .bool(true), let result = reply["result"] else { throw HarnessError("error reply: \(reply.encoded)") }
        return result
    }

    /// Sends `request` and returns its error object; throws if the reply is a success.
    func error(_ request: JSON) throws -> JSON {
        let reply = try self.request(request)
        guard reply["ok"] == .bool(false), let error = reply["error"] else { throw HarnessError("success reply: \(reply.encoded)") }
        return error
    }
}

extension JSON {
    /// The string at `key`, or `""`.
    func string(_ key: String) -> String { self[key]?.stringValue ?? "" }
}
