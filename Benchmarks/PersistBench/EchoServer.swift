import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The syscall ceiling of workload 7: a Unix-socket server that writes back every byte it
/// reads (so one line per request), one blocking thread per connection.
final class EchoServer: @unchecked Sendable {
    // @unchecked Sendable: `listener` is set once in init; the accept thread only reads it,
    // and `stop()` (called once, from the main thread) shuts it down.
    let path: String
    private let listener: Int32

    init(path: String) throws {
        self.path = path
        unlink(path)
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        listener = descriptor
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { throw BenchError("echo: socket path too long") }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in bytes.enumerated() { buffer[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, listen(descriptor, 1024) == 0 else { throw BenchError("echo: cannot listen on \(path)") }
        let listener = descriptor
        let thread = Thread {
            while true {
                let client = accept(listener, nil, nil)
                if client < 0 {
                    if errno == EINTR { continue }
                    return
                }
                let worker = Thread {
                    var buffer = [UInt8](repeating: 0, count: 64 << 10)
                    while true {
                        let count = buffer.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
                        if count <= 0 { break }
                        var offset = 0
                        while offset < count {
                            // The force-unwrap is safe: the 64 KiB buffer is never empty.
                            let sent = buffer.withUnsafeBytes { send(client, $0.baseAddress! + offset, count - offset, Int32(MSG_NOSIGNAL)) }
                            if sent <= 0 { break }
                            offset += sent
                        }
                    }
                    close(client)
                }
                worker.stackSize = 256 << 10
                worker.start()
            }
        }
        thread.start()
    }

    /// Stops accepting (connections already open end when their clients close).
    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        unlink(path)
    }
}

/// A benchmark that could not run.
struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
