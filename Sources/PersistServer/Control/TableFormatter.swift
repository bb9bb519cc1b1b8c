import Foundation

/// Formats results as aligned text tables for people.
///
/// Objects become one row each under `id` and their value names; dictionary rows under their
/// keys; `{"count": 3}` prints `3`; other results print as `key  value` lines.
public enum TableFormatter {
    /// The text for a result of `op` (without a final newline).
    public static func format(_ result: JSON) -> String {
        if let objects = result["objects"]?.arrayValue, result.members?.count == 1 {
            return table(objects.map { object in
                [JSON.Member("id", object["id"] ?? .null)] + (object["values"]?.members ?? [])
            })
        }
        if let object = result["object"], result.members?.count == 1 {
            return table([[JSON.Member("id", object["id"] ?? .null)] + (object["values"]?.members ?? [])])
        }
        if let rows = result["rows"]?.arrayValue, result.members?.count == 1 {
            return table(rows.map { $0.members ?? [] })
        }
        if let ids = result["ids"]?.arrayValue, result.members?.count == 1 {
            return ids.map(cell).joined(separator: "\n")
        }
        if let count = result["count"], result.members?.count == 1 {
            return cell(count)
        }
        let members = result.members ?? []
        let width = members.map(\.key.count).max() ?? 0
        return members.map { $0.key.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + cell($0.value) }
            .joined(separator: "\n")
    }

    /// One value as a table cell: strings bare, `null` empty, everything else as JSON.
    static func cell(_ value: JSON) -> String {
        switch value {
        case .string(let text): return text
        case .null: return ""
        case .array(let elements) where elements.allSatisfy({ $0.stringValue != nil }):
            return elements.compactMap(\.stringValue).joined(separator: ",")
        default: return value.encoded
        }
    }

    /// Rows of members as a table: the union of keys as columns, in first-seen order.
    static func table(_ rows: [[JSON.Member]]) -> String {
        var columns: [String] = []
        for row in rows { for member in row where !columns.contains(member.key) { columns.append(member.key) } }
        if columns.isEmpty { return "(no results)" }
        let cells = rows.map { row in columns.map { key in row.last { $0.key == key }.map { cell($0.value) } ?? "" } }
        let widths = columns.indices.map { index in max(columns[index].count, cells.map { $0[index].count }.max() ?? 0) }
        func line(_ values: [String]) -> String {
            zip(values, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined(separator: "  ")
                .replacingTrailingSpaces()
        }
        var lines = [line(columns), line(widths.map { String(repeating: "-", count: $0) })]
        lines += cells.map(line)
        if rows.isEmpty { lines.append("(no results)") }
        return lines.joined(separator: "\n")
    }
}

extension String {
    func replacingTrailingSpaces() -> String {
        var text = self
        while text.last == " " { text.removeLast() }
        return text
    }
}
