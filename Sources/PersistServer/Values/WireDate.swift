import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Dates on the wire: ISO 8601 in UTC with milliseconds, `2026-01-31T12:00:00.000Z`.
///
/// Formatting rounds to the nearest millisecond (so a date parsed from the wire prints back
/// to the same text although binary doubles cannot hold every millisecond exactly). Parsing accepts the same form,
/// with 0 to 9 fraction digits and `Z` or a `±hh:mm` offset.
public enum WireDate {
    /// `2026-01-31T12:00:00.000Z`.
    public static func format(_ date: Date) -> String {
        let totalMilliseconds = (date.timeIntervalSince1970 * 1000).rounded()
        var seconds = time_t(Int64((totalMilliseconds / 1000).rounded(.down)))
        let milliseconds = Int(totalMilliseconds - Double(Int64(seconds)) * 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2)).\(pad(Int32(milliseconds), 3))Z"
    }

    /// The date `text` names, or `nil` if it is not `YYYY-MM-DDThh:mm:ss[.fff]` followed by `Z` or `±hh:mm`.
    public static func parse(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        var index = 0
        func number(_ width: Int) -> Int32? {
            guard index + width <= bytes.count else { return nil }
            var value: Int32 = 0
            for _ in 0..<width {
                let byte = bytes[index]
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int32(byte - UInt8(ascii: "0"))
                index += 1
            }
            return value
        }
        func expect(_ character: Character) -> Bool {
            guard index < bytes.count, bytes[index] == character.asciiValue else { return false }
            index += 1
            return true
        }
        guard let year = number(4), expect("-"), let month = number(2), expect("-"), let day = number(2),
              expect("T"), let hour = number(2), expect(":"), let minute = number(2), expect(":"), let second = number(2),
              (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61 else { return nil }
        var fraction = 0.0
        if expect(".") {
            var digits: Int64 = 0
            var count = 0
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
                digits = digits * 10 + Int64(bytes[index] - UInt8(ascii: "0"))
                index += 1
                count += 1
                if count > 9 { return nil }
            }
            guard count > 0 else { return nil }
            fraction = Double(digits) / pow(10, Double(count))
        }
        var offset = 0
        if expect("Z") {
            offset = 0
        } else if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
            let sign = bytes[index] == UInt8(ascii: "-") ? -1 : 1
            index += 1
            guard let hours = number(2), expect(":"), let minutes = number(2), hours < 24, minutes < 60 else { return nil }
            offset = sign * Int(hours * 3600 + minutes * 60)
        } else {
            return nil
        }
        guard index == bytes.count else { return nil }
        var parts = tm()
        parts.tm_year = year - 1900
        parts.tm_mon = month - 1
        parts.tm_mday = day
        parts.tm_hour = hour
        parts.tm_min = minute
        parts.tm_sec = second
        let seconds = timegm(&parts)
        // timegm normalizes out-of-range days (Feb 30 → Mar 2); refuse those.
        guard parts.tm_mday == day, parts.tm_mon == month - 1 else { return nil }
        return Date(timeIntervalSince1970: Double(seconds - offset) + fraction)
    }
}
