import Foundation

/// Core Data's SQLite layout for one model: entity numbers, tables, columns, join tables and
/// indexes, computed once when a store opens.
///
/// See `docs/sqlite-layout.md` for which rules were verified against real Core Data stores and
/// which are inferred. In short: one table `Z<ROOT>` per inheritance tree, with `Z_PK`, `Z_ENT`,
/// `Z_OPT`, then one `Z<NAME>` column per stored attribute and to-one relationship of every
/// entity of the tree; many-to-many relationships in join tables `Z_<n><NAME>`.
struct SQLiteSchema: Sendable {
    /// What a column of an entity table stores.
    enum ColumnKind: Sendable {
        /// A stored attribute.
        case attribute(AttributeDescription)
        /// A to-one relationship's destination primary key.
        case foreignKey(RelationshipDescription)
        /// A to-one relationship's destination entity number (destination has sub-entities).
        case foreignEntity(RelationshipDescription)
        /// The position (`Z_FOK_<TO-ONE>`) of this row in its owner's ordered to-many relationship;
        /// holds the to-one relationship that is the inverse of the ordered one.
        case foreignOrder(RelationshipDescription)
    }

    /// One column of an entity table.
    struct Column: Sendable {
        /// The column name, for example `ZNAME` or `ZNAME1`.
        var name: String
        /// The declared type as Core Data writes it: `INTEGER`, `FLOAT`, `TIMESTAMP`, `VARCHAR`, `BLOB`, `DECIMAL`.
        var sqlType: String
        /// What the column stores.
        var kind: ColumnKind
    }

    /// The table of one inheritance tree.
    struct Table: Sendable {
        /// `Z<ROOT ENTITY NAME uppercased>`.
        var name: String
        /// The tree's root entity.
        var root: EntityDescription
        /// The columns after `Z_PK`, `Z_ENT`, `Z_OPT`, in table order.
        var columns: [Column]
        /// `CREATE INDEX` statements for the table.
        var indexes: [String]
    }

    /// A join table holding one many-to-many (or inverse-less to-many) relationship.
    struct JoinTable: Sendable {
        /// `Z_<n><RELATIONSHIP>`, from the canonical side.
        var name: String
        /// The canonical relationship (from the entity with the lower number).
        var relationship: RelationshipDescription
        /// The column holding the canonical relationship's source primary key.
        var sourceColumn: String
        /// The column holding the canonical relationship's destination primary key.
        var destinationColumn: String
        /// `Z_FOK_<n><RELATIONSHIP>`: the destination's position, if the canonical side is ordered.
        var destinationOrderColumn: String?
        /// `Z_FOK_<n><INVERSE>`: the source's position, if the inverse side is ordered.
        var sourceOrderColumn: String?
    }

    /// Where a concrete entity's slot lives in its table.
    enum SlotColumn: Sendable {
        /// Not stored (transient).
        case none
        /// An attribute in table column `index` (0-based, after `Z_PK`, `Z_ENT`, `Z_OPT`).
        case attribute(index: Int, type: AttributeType)
        /// A to-one relationship: the primary key column, and the entity column if any.
        case toOne(index: Int, entityIndex: Int?, relationship: UnretainedRelationship)
    }

    /// A relationship referenced without a retain, for ``SlotColumn/toOne(index:entityIndex:relationship:)``.
    ///
    /// The layout holding the slot column holds the relationship's entity, which holds the
    /// relationship, so the reference stays valid while the layout exists. The row decoder
    /// reads a to-one slot's column per row; a retained reference cost a retain and a release
    /// each time (about 60 instructions a prefetched child under callgrind, workload 5).
    ///
    /// Read through `Unmanaged`, not as an `unowned(unsafe)` property: loading such a property
    /// makes a strong reference, which the decoder retained and released per row all the same
    /// (a prefetched child's to-one slot, workload 5).
    struct UnretainedRelationship: @unchecked Sendable {
        // @unchecked Sendable: an unretained reference to a relationship of a frozen model,
        // which no thread changes; it is only read.
        private let reference: Unmanaged<RelationshipDescription>

        init(relationship: RelationshipDescription) {
            reference = .passUnretained(relationship)
        }

        /// Whether this is `other`, compared by address, with no reference made.
        @inline(__always) func isIdentical(to other: RelationshipDescription?) -> Bool {
            guard let other else { return false }
            return reference.toOpaque() == Unmanaged.passUnretained(other).toOpaque()
        }

        /// The relationship's destination entity, read without retaining the relationship.
        @inline(__always) var destinationEntity: EntityDescription? {
            reference._withUnsafeGuaranteedRef { $0.destinationEntity }
        }
    }

    /// The layout of one entity.
    struct EntityLayout: Sendable {
        let entity: EntityDescription
        /// The entity number (`Z_ENT`).
        var number: Int
        /// The index of its tree's table in ``SQLiteSchema/tables``.
        var tableIndex: Int
        /// One entry per slot of the entity.
        let slotColumns: [SlotColumn]
        /// The entity numbers of this entity and its descendants.
        var selfAndDescendantNumbers: [Int]
        /// The slot columns as the row decoder reads them: pointers, copied out of the layout
        /// with no reference counted (see ``SQLiteRowColumns``). Valid while ``rowColumnStorage``
        /// is, that is while this layout or a copy of it exists.
        let rowColumns: SQLiteRowColumns.View
        /// The memory ``rowColumns`` points into.
        private let rowColumnStorage: SQLiteRowColumns

        init(entity: EntityDescription, number: Int, tableIndex: Int, slotColumns: [SlotColumn], selfAndDescendantNumbers: [Int]) {
            self.entity = entity
            self.number = number
            self.tableIndex = tableIndex
            self.slotColumns = slotColumns
            self.selfAndDescendantNumbers = selfAndDescendantNumbers
            self.rowColumnStorage = SQLiteRowColumns(slotColumns, entity: entity)
            self.rowColumns = rowColumnStorage.view
        }
    }

    /// Every table, in root-entity order.
    var tables: [Table]
    /// Every join table.
    var joinTables: [JoinTable]
    /// Entity layouts by entity name.
    var entities: [String: EntityLayout]
    /// Entities by number.
    var entitiesByNumber: [Int: EntityDescription]
    /// Entity layouts indexed by entity number, for decoding rows without hashing.
    var layoutsByNumber: [EntityLayout?]
    /// Join tables by the `ObjectIdentifier` of either side's relationship.
    var joinTableIndexByRelationship: [ObjectIdentifier: Int]

    /// Computes the layout of `entities` (a model or one configuration of it).
    ///
    /// - Parameter existingNumbers: entity numbers read from an existing store's
    ///   `Z_PRIMARYKEY`, by entity name; they win over the numbering computed here.
    init(entities: [EntityDescription], existingNumbers: [String: Int] = [:]) {
        // Numbering (inferred from Core Data stores, see the docs): roots sorted by name, each
        // tree depth-first with siblings sorted by name.
        let included = Set(entities.map { ObjectIdentifier($0) })
        let roots = entities.filter { $0.superentity == nil || !included.contains(ObjectIdentifier($0.superentity!)) }
            .sorted { $0.name < $1.name }
        // (force-unwrap above: evaluated only when superentity is not nil.)
        func preorder(_ entity: EntityDescription) -> [EntityDescription] {
            [entity] + entity.subentities.filter { included.contains(ObjectIdentifier($0)) }
                .sorted { $0.name < $1.name }.flatMap(preorder)
        }
        let ordered = roots.flatMap(preorder)
        var numbers: [String: Int] = [:]
        var next = (existingNumbers.values.max() ?? 0) + 1
        for entity in ordered {
            if let existing = existingNumbers[entity.name] {
                numbers[entity.name] = existing
            } else if existingNumbers.isEmpty {
                numbers[entity.name] = numbers.count + 1
            } else {
                numbers[entity.name] = next
                next += 1
            }
        }
        func number(_ entity: EntityDescription?) -> Int { entity.flatMap { numbers[$0.name] } ?? 0 }

        var tables: [Table] = []
        var layouts: [String: EntityLayout] = [:]
        var byNumber: [Int: EntityDescription] = [:]
        for root in roots {
            let tree = preorder(root)
            var used: Set<String> = ["Z_PK", "Z_ENT", "Z_OPT"]
            func unique(_ base: String) -> String {
                if used.insert(base).inserted { return base }
                var suffix = 1
                while !used.insert("\(base)\(suffix)").inserted { suffix += 1 }
                return "\(base)\(suffix)"
            }
            var columns: [Column] = []
            for group in 0..<4 {
                for entity in tree {
                    let attributes = entity.properties.compactMap { $0 as? AttributeDescription }
                        .filter { !$0.isTransient && Self.group(of: $0.attributeType) == group }
                        .sorted { $0.name < $1.name }
                    for attribute in attributes {
                        columns.append(Column(name: unique("Z" + attribute.name.uppercased()),
                                              sqlType: Self.sqlType(of: attribute.attributeType), kind: .attribute(attribute)))
                    }
                    guard group == 0 else { continue }
                    let toOnes = entity.properties.compactMap { $0 as? RelationshipDescription }
                        .filter { !$0.isTransient && !$0.isToMany }
                        .sorted { $0.name < $1.name }
                    for relationship in toOnes {
                        let upper = relationship.name.uppercased()
                        columns.append(Column(name: unique("Z" + upper), sqlType: "INTEGER", kind: .foreignKey(relationship)))
                        if let destination = relationship.destinationEntity, !destination.subentities.isEmpty {
                            columns.append(Column(name: unique("Z\(number(destination))\(upper)"), sqlType: "INTEGER",
                                                  kind: .foreignEntity(relationship)))
                        }
                        if let inverse = relationship.inverseRelationship, inverse.isToMany, inverse.isOrdered {
                            columns.append(Column(name: unique("Z_FOK_\(upper)"), sqlType: "INTEGER", kind: .foreignOrder(relationship)))
                        }
                    }
                }
            }
            let tableName = "Z" + root.name.uppercased()
            var indexes: [String] = []
            for column in columns {
                let indexed: Bool
                switch column.kind {
                case .foreignKey: indexed = true
                case .attribute(let attribute): indexed = attribute.isIndexed
                default: indexed = false
                }
                if indexed {
                    indexes.append("CREATE INDEX \(Self.ddl("\(tableName)_\(column.name)_INDEX")) ON \(Self.ddl(tableName)) (\(Self.ddl(column.name)))")
                }
            }
            let tableIndex = tables.count
            tables.append(Table(name: tableName, root: root, columns: columns, indexes: indexes))
            for entity in tree {
                var slotColumns: [SlotColumn] = []
                for property in entity.slots {
                    if property.isTransient { slotColumns.append(.none); continue }
                    if let attribute = property as? AttributeDescription,
                       let index = columns.firstIndex(where: { if case .attribute(let a) = $0.kind { return a === attribute }; return false }) {
                        slotColumns.append(.attribute(index: index, type: attribute.attributeType))
                    } else if let relationship = property as? RelationshipDescription,
                              let index = columns.firstIndex(where: { if case .foreignKey(let r) = $0.kind { return r === relationship }; return false }) {
                        let entityIndex = columns.firstIndex(where: { if case .foreignEntity(let r) = $0.kind { return r === relationship }; return false })
                        slotColumns.append(.toOne(index: index, entityIndex: entityIndex, relationship: UnretainedRelationship(relationship: relationship)))
                    } else {
                        slotColumns.append(.none)
                    }
                }
                let entityNumber = number(entity)
                byNumber[entityNumber] = entity
                layouts[entity.name] = EntityLayout(entity: entity, number: entityNumber, tableIndex: tableIndex, slotColumns: slotColumns,
                                                    selfAndDescendantNumbers: preorder(entity).map(number))
            }
            // Fetch indexes, after the foreign-key indexes.
            for entity in tree {
                for index in entity.indexes {
                    let parts = index.elements.compactMap { element -> String? in
                        guard let column = columns.first(where: { column in
                            switch column.kind {
                            case .attribute(let a): return a.name == element.propertyName && entity.isKind(of: a.entity ?? entity)
                            case .foreignKey(let r): return r.name == element.propertyName && entity.isKind(of: r.entity ?? entity)
                            default: return false
                            }
                        }) else { return nil }
                        return Self.ddl(column.name) + (element.isAscending ? "" : " DESC")
                    }
                    guard !parts.isEmpty else { continue }
                    tables[tableIndex].indexes.append(
                        "CREATE INDEX \(Self.ddl("Z\(entity.name.uppercased())_\(index.name)")) ON \(Self.ddl(tableName)) (\(parts.joined(separator: ", ")))")
                }
            }
        }

        var joinTables: [JoinTable] = []
        var joinIndex: [ObjectIdentifier: Int] = [:]
        for entity in ordered {
            for case let relationship as RelationshipDescription in entity.properties
            where relationship.isManyToMany && !relationship.isTransient {
                let inverse = relationship.inverseRelationship
                if let inverse, inverse !== relationship {
                    let mine = (number(entity), relationship.name)
                    let theirs = (number(inverse.entity), inverse.name)
                    if theirs < mine { continue } // the inverse is the canonical side
                }
                let numberA = number(entity)
                let numberB = number(relationship.destinationEntity)
                let upper = relationship.name.uppercased()
                let source = "Z_\(numberA)\((inverse?.name ?? entity.name).uppercased())"
                var destination = "Z_\(numberB)\(upper)"
                if destination == source { destination += "1" }
                let table = JoinTable(
                    name: "Z_\(numberA)\(upper)", relationship: relationship, sourceColumn: source, destinationColumn: destination,
                    destinationOrderColumn: relationship.isOrdered ? "Z_FOK_" + destination.dropFirst(2) : nil,
                    sourceOrderColumn: (inverse?.isOrdered ?? false) && inverse !== relationship ? "Z_FOK_" + source.dropFirst(2) : nil)
                joinIndex[ObjectIdentifier(relationship)] = joinTables.count
                if let inverse { joinIndex[ObjectIdentifier(inverse)] = joinTables.count }
                joinTables.append(table)
            }
        }

        self.tables = tables
        self.joinTables = joinTables
        self.entities = layouts
        self.entitiesByNumber = byNumber
        var numbered = [EntityLayout?](repeating: nil, count: (byNumber.keys.max() ?? 0) + 1)
        for (number, entity) in byNumber where number >= 0 { numbered[number] = layouts[entity.name] }
        self.layoutsByNumber = numbered
        self.joinTableIndexByRelationship = joinIndex
    }

    // MARK: - Types

    /// The column group of an attribute type: 0 integers and booleans (to-one keys follow them),
    /// 1 dates and floating point, 2 strings, 3 blobs; -1 for types never stored.
    static func group(of type: AttributeType) -> Int {
        switch type {
        case .integer16, .integer32, .integer64, .boolean: return 0
        case .date, .double, .float, .decimal: return 1
        case .string, .uri: return 2
        case .binaryData, .transformable, .uuid: return 3
        case .undefined, .objectID: return -1
        }
    }

    /// The column type Core Data declares for an attribute type.
    static func sqlType(of type: AttributeType) -> String {
        switch type {
        case .integer16, .integer32, .integer64, .boolean: return "INTEGER"
        case .date: return "TIMESTAMP"
        case .double, .float: return "FLOAT"
        case .decimal: return "DECIMAL"
        case .string, .uri: return "VARCHAR"
        case .binaryData, .transformable, .uuid, .undefined, .objectID: return "BLOB"
        }
    }

    // MARK: - SQL text

    /// An identifier double-quoted for SQL (`"ZNAME"`), with embedded quotes doubled.
    static func quote(_ identifier: String) -> String {
        // Most identifiers hold no quote: no search and replace through Foundation's NSString.
        if !identifier.utf8.contains(UInt8(ascii: "\"")) { return "\"" + identifier + "\"" }
        return "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// An identifier as Core Data writes it in DDL: bare when it is a plain identifier
    /// (so `sqlite_master` reads as in a store made by Core Data), quoted otherwise.
    static func ddl(_ identifier: String) -> String {
        let plain = identifier.utf8.allSatisfy { ($0 >= 65 && $0 <= 90) || ($0 >= 97 && $0 <= 122) || ($0 >= 48 && $0 <= 57) || $0 == 95 }
        return plain && !(identifier.first?.isNumber ?? true) ? identifier : quote(identifier)
    }

    /// `CREATE TABLE Z_PRIMARYKEY …`, exactly as Core Data writes it.
    static let primaryKeyTableSQL = "CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)"
    /// `CREATE TABLE Z_METADATA …`, exactly as Core Data writes it.
    static let metadataTableSQL = "CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)"

    /// The `CREATE TABLE` statement of an entity table, in Core Data's spelling.
    func createTableSQL(_ table: Table) -> String {
        let columns = ["Z_PK INTEGER PRIMARY KEY", "Z_ENT INTEGER", "Z_OPT INTEGER"]
            + table.columns.map { "\(Self.ddl($0.name)) \($0.sqlType)" }
        return "CREATE TABLE \(Self.ddl(table.name)) ( \(columns.joined(separator: ", ")) )"
    }

    /// The `CREATE TABLE` and `CREATE INDEX` statements of a join table.
    func createJoinTableSQL(_ join: JoinTable) -> [String] {
        var columns = ["\(Self.ddl(join.sourceColumn)) INTEGER", "\(Self.ddl(join.destinationColumn)) INTEGER"]
        if let order = join.sourceOrderColumn { columns.append("\(Self.ddl(order)) INTEGER") }
        if let order = join.destinationOrderColumn { columns.append("\(Self.ddl(order)) INTEGER") }
        columns.append("PRIMARY KEY (\(Self.ddl(join.sourceColumn)), \(Self.ddl(join.destinationColumn)))")
        return [
            "CREATE TABLE \(Self.ddl(join.name)) ( \(columns.joined(separator: ", ")) )",
            "CREATE INDEX \(Self.ddl("\(join.name)_\(join.destinationColumn)_INDEX")) ON \(Self.ddl(join.name)) (\(Self.ddl(join.destinationColumn)), \(Self.ddl(join.sourceColumn)))",
        ]
    }

    /// Every statement that creates the schema, in order: bookkeeping tables, entity tables
    /// with their indexes, join tables.
    func creationSQL() -> [String] {
        var statements: [String] = []
        for table in tables {
            statements.append(createTableSQL(table))
            statements += table.indexes
        }
        for join in joinTables { statements += createJoinTableSQL(join) }
        statements.append(Self.primaryKeyTableSQL)
        statements.append(Self.metadataTableSQL)
        return statements
    }

    // MARK: - Lookups

    /// The layout of `entity`, which must be in the schema.
    func layout(of entity: EntityDescription) -> EntityLayout? { entities[entity.name] }

    /// The table of `entity`'s tree.
    func table(of entity: EntityDescription) -> Table? { layout(of: entity).map { tables[$0.tableIndex] } }

    /// The join table of a many-to-many relationship (either side).
    func joinTable(of relationship: RelationshipDescription) -> JoinTable? {
        joinTableIndexByRelationship[ObjectIdentifier(relationship)].map { joinTables[$0] }
    }

    /// The column of `table` holding the property `name` declared by an ancestor-or-self of
    /// `entity`, as a foreign key for relationships.
    func column(named name: String, of entity: EntityDescription) -> (index: Int, column: Column)? {
        guard let table = table(of: entity) else { return nil }
        for (index, column) in table.columns.enumerated() {
            switch column.kind {
            case .attribute(let a) where a.name == name && a.entity.map({ entity.isKind(of: $0) }) ?? false:
                return (index, column)
            case .foreignKey(let r) where r.name == name && r.entity.map({ entity.isKind(of: $0) }) ?? false:
                return (index, column)
            default: continue
            }
        }
        return nil
    }

    /// The `Z_FOK_` column that orders the destinations of the ordered one-to-many `relationship`.
    func orderColumn(ofOrdered relationship: RelationshipDescription) -> String? {
        guard let inverse = relationship.inverseRelationship, let destination = relationship.destinationEntity,
              let table = table(of: destination) else { return nil }
        return table.columns.first { if case .foreignOrder(let r) = $0.kind { return r === inverse }; return false }?.name
    }
}
