import Testing
@testable import PersistServer

/// The line framer, byte by byte.
@Suite("Line framer")
struct LineFramerTests {
    func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test("complete lines come out without their terminators; \\r\\n and \\n both end a line")
    func lines() {
        var framer = LineFramer(maximumLineLength: 100)
        framer.append(bytes("{\"op\":\"ping\"}\n{\"op\":\"hello\"}\r\n\n"))
        #expect(framer.nextLine() == .line(bytes("{\"op\":\"ping\"}")))
        #expect(framer.nextLine() == .line(bytes("{\"op\":\"hello\"}")))
        #expect(framer.nextLine() == .line([]))
        #expect(framer.nextLine() == nil)
        #expect(framer.leftover == [])
    }

    @Test("a line split across reads, one byte at a time, comes out once, whole")
    func partial() {
        var framer = LineFramer(maximumLineLength: 100)
        let text = bytes("{\"id\":1}\r\n")
        for (index, byte) in text.enumerated() {
            framer.append([byte])
            if index < text.count - 1 {
                #expect(framer.nextLine() == nil)
            }
        }
        #expect(framer.nextLine() == .line(bytes("{\"id\":1}")))
        #expect(framer.nextLine() == nil)
    }

    @Test("the bytes after the last newline are leftover")
    func leftover() {
        var framer = LineFramer(maximumLineLength: 100)
        framer.append(bytes("a\nbc"))
        #expect(framer.nextLine() == .line(bytes("a")))
        #expect(framer.nextLine() == nil)
        #expect(framer.leftover == bytes("bc"))
        framer.append(bytes("d\r"))
        #expect(framer.nextLine() == nil)
        framer.append(bytes("\n"))
        #expect(framer.nextLine() == .line(bytes("bcd")))
    }

    @Test("a \\r inside a line is kept; only the one before \\n is stripped")
    func innerCarriageReturn() {
        var framer = LineFramer(maximumLineLength: 100)
        framer.append(bytes("a\rb\r\r\n"))
        #expect(framer.nextLine() == .line(bytes("a\rb\r")))
    }

    @Test("a line of exactly the limit passes, with \\n or \\r\\n")
    func atLimit() {
        var framer = LineFramer(maximumLineLength: 4)
        framer.append(bytes("abcd\nefgh\r"))
        #expect(framer.nextLine() == .line(bytes("abcd")))
        #expect(framer.nextLine() == nil)
        framer.append(bytes("\n"))
        #expect(framer.nextLine() == .line(bytes("efgh")))
    }

    @Test("a line over the limit is reported before its newline arrives, and poisons the framer")
    func tooLong() {
        var framer = LineFramer(maximumLineLength: 4)
        framer.append(bytes("ok\nabcd\r"))
        #expect(framer.nextLine() == .line(bytes("ok")))
        #expect(framer.nextLine() == nil) // 5 bytes, but the \r may start "\r\n"
        framer.append(bytes("f"))
        #expect(framer.nextLine() == .tooLong)
        #expect(framer.isPoisoned)
        framer.append(bytes("\n{}\n"))
        #expect(framer.nextLine() == nil)
    }

    @Test("an over-long line is reported as soon as it is certain: at limit + 1 bytes that are not a \\r")
    func tooLongEarly() {
        var framer = LineFramer(maximumLineLength: 3)
        framer.append(bytes("abc"))
        #expect(framer.nextLine() == nil)
        framer.append(bytes("d"))
        #expect(framer.nextLine() == .tooLong)
        var complete = LineFramer(maximumLineLength: 3)
        complete.append(bytes("abcd\n"))
        #expect(complete.nextLine() == .tooLong)
    }

    @Test("many lines in one read, then more: memory is reclaimed and nothing is lost")
    func many() {
        var framer = LineFramer(maximumLineLength: 10)
        var expected: [[UInt8]] = []
        for round in 0..<50 {
            var chunk: [UInt8] = []
            for index in 0..<7 {
                let line = bytes("\(round):\(index)")
                expected.append(line)
                chunk += line + [0x0A]
            }
            // Split each chunk at an odd place.
            framer.append(chunk[0..<5])
            var got: [[UInt8]] = []
            while case .line(let line)? = framer.nextLine() { got.append(line) }
            framer.append(chunk[5...])
            while case .line(let line)? = framer.nextLine() { got.append(line) }
            #expect(got == Array(expected.suffix(7)))
        }
    }
}
