import PersistServer

/// The fuzz target of the wire protocol's input side: ``LineFramer`` and ``WireRequest/decode(_:)``.
///
/// Input layout: byte 0 picks the maximum line length (1…128, or 1 MiB as the daemon uses when
/// it is 128 or more), byte 1 the size of the pieces the rest arrives in (1…16, or all at once),
/// the rest is the byte stream of a connection.
///
/// Checked, besides "does not crash": the framer gives the same frames however the stream is
/// cut into pieces (compared with a one-pass reference split); no line holds a `\n` or is over
/// the limit; every line that parses as JSON encodes back to the same value.
enum WireRequestFuzzer {
    static func run(_ input: [UInt8]) {
        guard input.count >= 2 else { return }
        let maximum = input[0] < 128 ? Int(input[0]) + 1 : 1 << 20
        let piece = input[1] < 16 ? Int(input[1]) + 1 : Int.max
        let stream = input[2...]

        var framer = LineFramer(maximumLineLength: maximum)
        var frames: [LineFramer.Frame] = []
        var offset = stream.startIndex
        while offset < stream.endIndex {
            let end = stream.index(offset, offsetBy: min(piece, stream.endIndex - offset))
            framer.append(stream[offset..<end])
            while let frame = framer.nextLine() { frames.append(frame) }
            offset = end
        }
        let expected = referenceFrames(Array(stream), maximum: maximum)
        precondition(frames == expected.frames, "LineFramer: pieces of \(piece) bytes gave \(frames), one pass \(expected.frames)")
        if !framer.isPoisoned {
            precondition(framer.leftover == expected.leftover, "LineFramer: leftover \(framer.leftover), expected \(expected.leftover)")
        }

        for case .line(let line) in frames {
            precondition(!line.contains(UInt8(ascii: "\n")) && line.count <= maximum, "LineFramer: bad line \(line)")
            decode(line)
        }
    }

    /// A line through the JSON parser and the request decoder.
    static func decode(_ line: [UInt8]) {
        if let json = try? JSONParser.parse(line) {
            let again: JSON
            do {
                again = try JSONParser.parse(json.encodedBytes)
            } catch {
                preconditionFailure("JSON: \(json.encoded) does not parse back: \(error)")
            }
            precondition(again == finite(json), "JSON: \(json) encodes as \(json.encoded), which parses as \(again)")
            visitStrings(json)
        }
        switch Result(catching: { () throws(WireRequest.DecodingFailure) in try WireRequest.decode(line) }) {
        case .success(let request):
            precondition(request.body["op"] == .string(request.op), "WireRequest: op \(request.op) is not the body's")
        case .failure(let failure):
            precondition(failure.id == .null || failure.id.stringValue != nil || { if case .integer = failure.id { true } else { false } }(),
                         "WireRequest: the error reply's id \(failure.id) is neither a string, an integer nor null")
        }
    }

    /// `json` as its encoding reads back: non-finite doubles are written as `null`.
    static func finite(_ json: JSON) -> JSON {
        switch json {
        case .double(let value) where !value.isFinite: return .null
        case .array(let elements): return .array(elements.map(finite))
        case .object(let members): return .object(members.map { JSON.Member($0.key, finite($0.value)) })
        default: return json
        }
    }

    /// Every string of a request is a candidate wire date: parse and format those that are.
    static func visitStrings(_ json: JSON) {
        switch json {
        case .string(let text):
            if let date = WireDate.parse(text) { _ = WireDate.format(date) }
        case .array(let elements): elements.forEach(visitStrings)
        case .object(let members): members.forEach { visitStrings($0.value) }
        default: break
        }
    }

    /// The frames of `stream` split in one pass, as the framer's contract describes them.
    static func referenceFrames(_ stream: [UInt8], maximum: Int) -> (frames: [LineFramer.Frame], leftover: [UInt8]) {
        var frames: [LineFramer.Frame] = []
        var start = 0
        for (index, byte) in stream.enumerated() where byte == UInt8(ascii: "\n") {
            var line = Array(stream[start..<index])
            if line.last == UInt8(ascii: "\r") { line.removeLast() }
            start = index + 1
            if line.count > maximum { return (frames + [.tooLong], []) }
            frames.append(.line(line))
        }
        let partial = Array(stream[start...])
        if partial.count > maximum + 1 || (partial.count == maximum + 1 && partial.last != UInt8(ascii: "\r")) {
            return (frames + [.tooLong], [])
        }
        return (frames, partial)
    }
}
