import Foundation

extension SQLiteStore {
    /// Checks, inside a save's transaction, that no row written collides on a uniqueness
    /// constraint with another row of its table, as another connection may have inserted one
    /// after the saving context validated. A collision throws
    /// ``PersistenceError/Code/managedObjectConstraintMerge`` (the transaction then rolls back,
    /// and the context validates again, resolving by its merge policy).
    func checkUniqueness(of rows: [RowSnapshot], _ connection: SQLiteConnection) throws {
        for row in rows {
            let entity = row.objectID.entity
            let constraints = entity.inheritedUniquenessConstraints
            guard !constraints.isEmpty, let layout = schema.layout(of: entity) else { continue }
            let table = schema.tables[layout.tableIndex]
            for constraint in constraints {
                var conditions: [String] = []
                var arguments: [StoreValue] = []
                for name in constraint {
                    guard let slot = entity.slotIndex(of: name), slot < row.values.count, slot < layout.slotColumns.count else { break }
                    let value = row.values[slot]
                    switch layout.slotColumns[slot] {
                    case .attribute(let index, _):
                        conditions.append("\(SQLiteSchema.quote(table.columns[index].name)) = ?")
                        arguments.append(value)
                    case .toOne(let index, _, _):
                        conditions.append("\(SQLiteSchema.quote(table.columns[index].name)) = ?")
                        if case .object(let id) = value { arguments.append(.integer(id.primaryKey)) } else { arguments.append(value) }
                    case .none:
                        break
                    }
                    if value.isNull { conditions = []; break }
                }
                guard conditions.count == constraint.count else { continue }
                let sql = "SELECT \"Z_PK\" FROM \(SQLiteSchema.quote(table.name)) WHERE \(conditions.joined(separator: " AND ")) AND \"Z_PK\" != ? LIMIT 1"
                if let other = try connection.int64(sql, arguments + [.integer(row.objectID.primaryKey)]) {
                    throw PersistenceError(.managedObjectConstraintMerge,
                                           "\(entity.name) \(constraint.joined(separator: ",")) collides with row \(other) already in the store "
                                           + "(uniqueness constraint): another context or process wrote it after this save was validated",
                                           objectID: row.objectID, key: constraint.joined(separator: ","))
                }
            }
        }
    }
}
