import Foundation

/// Copies stdin to the daemon for `persistctl raw`, then closes the sending side.
final class RawSender: @unchecked Sendable {
    // @unchecked Sendable: `failed` is written by the sending thread before it signals the
    // semaphore, and read by the main thread only after waiting on it.
    let client: ControlClient
    var failed = false

    init(client: ControlClient) { self.client = client }

    func sendStandardInput() {
        while let line = readLine(strippingNewline: true) {
            do {
                try client.send(line: line)
            } catch {
                FileHandle.standardError.write(Data("persistctl: \(error)\n".utf8))
                failed = true
                break
            }
        }
        client.shutdownWrite()
    }
}
