@testable import PersistServer
import Testing

/// `persistctl bench` counts a unit's replies by their lines, read a `recv` at a time: lines
/// split across reads, failures and lines without the success mark are each counted once.
@Suite("Load generator reply lines")
struct ReplyLinesTests {
    /// The lines `chunks` end, read one chunk at a time, each as whether it succeeded.
    static func lines(_ chunks: [String], checksReplies: Bool = true) -> (lines: [Bool], carried: Int) {
        var replies = ReplyLines()
        var seen: [Bool] = []
        for chunk in chunks {
            Array(chunk.utf8).withUnsafeBytes { bytes in
                replies.scan(bytes, checksReplies: checksReplies) { seen.append($0) }
            }
        }
        return (seen, replies.carriedCount)
    }

    @Test func wholeLinesInOneRead() {
        let read = Self.lines([#"{"id":1,"ok":true,"result":{}}"# + "\n" + #"{"id":2,"ok":false,"error":{}}"# + "\n"])
        #expect(read.lines == [true, false])
        #expect(read.carried == 0)
    }

    @Test func aLineSplitAcrossReadsIsCountedOnceItEnds() {
        let line = #"{"id":12,"ok":true,"result":{"object":{"id":"x-coredata://A/Item/p1"}}}"#
        let bytes = Array(line.utf8)
        // Split at every position, the mark itself included.
        for cut in 1..<bytes.count {
            let first = String(decoding: bytes[..<cut], as: UTF8.self)
            let second = String(decoding: bytes[cut...], as: UTF8.self) + "\n" + #"{"id":13,"ok":true}"# + "\n"
            let read = Self.lines([first, second])
            #expect(read.lines == [true, true], "cut at \(cut)")
            #expect(read.carried == 0)
        }
        // The start of a line is kept until its end comes.
        let pending = Self.lines([#"{"id":1,"ok":true}"# + "\n" + #"{"id":2,"#, #""ok":"#])
        #expect(pending.lines == [true])
        #expect(pending.carried == #"{"id":2,"ok":"#.utf8.count)
    }

    @Test func theMarkCountsOnlyNearTheStartOfALine() {
        let late = #"{"id":1,"ok":false,"error":{"message":"values such as "# + #""ok":true"# + #" are not accepted"}}"#
        #expect(Self.lines([late + "\n"]).lines == [false])
        #expect(Self.lines([#"{"id":1,"ok":tru"# + "\n"]).lines == [false])
        #expect(Self.lines(["\n"]).lines == [false])
    }

    @Test func anEchoIsCountedWithoutTheMark() {
        #expect(Self.lines(["ping\npong\n", "half", " line\n"], checksReplies: false).lines == [true, true, true])
    }
}
