import PersistKit

extension Session {
    /// `fetch {entity, predicate?, arguments?, sort?, limit?, offset?, properties?, resultType?,
    /// groupBy?, having?, distinct?, prefetch?}` → `{"objects"}` | `{"ids"}` | `{"count"}` | `{"rows"}`.
    func fetch(_ body: JSON, in context: ManagedObjectContext) throws(WireError) -> JSON {
        let fields = RequestFields(body, op: "fetch")
        let entity = try fields.entity(in: state.container.managedObjectModel)
        let resultType = try fields.string("resultType") ?? "objects"
        let properties = try fields.stringArray("properties")
        if let properties { for name in properties { _ = try entity.checkProperty(name) } }
        if fields.has("groupBy") || fields.has("having") {
            throw WireError(.badRequest, "fetch: groupBy and having are not available yet")
        }
        switch resultType {
        case "objects":
            let request = FetchRequest<ManagedObject>(entity: entity)
            try configure(request, fields: fields, entity: entity)
            request.returnsObjectsAsFaults = false
            let objects = try run { try context.fetch(request) }
            return .object(["objects": .array(objects.map { WireValueCoder.encode($0, properties: properties) })])
        case "ids":
            let request = FetchRequest<ManagedObjectID>(entity: entity)
            try configure(request, fields: fields, entity: entity)
            request.resultType = .managedObjectIDResultType
            let ids = try run { try context.fetch(request) }
            return .object(["ids": .array(ids.map { .string(WireObjectID.format($0)) })])
        case "count":
            let request = FetchRequest<ManagedObject>(entity: entity)
            try configure(request, fields: fields, entity: entity)
            let count = try run { try context.count(for: request) }
            return .object(["count": .integer(Int64(count))])
        case "dictionaries":
            let request = FetchRequest<[String: Any]>(entity: entity)
            try configure(request, fields: fields, entity: entity)
            request.resultType = .dictionaryResultType
            request.propertiesToFetch = properties
            request.returnsDistinctResults = try fields.bool("distinct") ?? false
            let rows = try run { try context.fetch(request) }
            let names = properties ?? entity.allProperties.filter { !$0.isTransient && !(($0 as? RelationshipDescription)?.isToMany ?? false) }.map(\.name)
            return .object(["rows": .array(rows.map { row in
                .object(names.compactMap { name in row[name].map { JSON.Member(name, WireValueCoder.encode(any: $0)) } ?? JSON.Member(name, .null) })
            })])
        default:
            throw WireError(.badRequest, "fetch: resultType must be \"objects\", \"ids\", \"count\" or \"dictionaries\", not \"\(resultType)\"")
        }
    }

    /// `count {entity, predicate?, arguments?}` → `{"count":n}`.
    func count(_ body: JSON, in context: ManagedObjectContext) throws(WireError) -> JSON {
        let fields = RequestFields(body, op: "count")
        let entity = try fields.entity(in: state.container.managedObjectModel)
        let request = FetchRequest<ManagedObject>(entity: entity)
        request.predicate = try predicate(fields, entity: entity)
        let count = try run { try context.count(for: request) }
        return .object(["count": .integer(Int64(count))])
    }

    private func configure<T>(_ request: FetchRequest<T>, fields: RequestFields, entity: EntityDescription) throws(WireError) {
        request.predicate = try predicate(fields, entity: entity)
        request.sortDescriptors = try sortDescriptors(fields, entity: entity)
        request.fetchLimit = try fields.integer("limit") ?? 0
        request.fetchOffset = try fields.integer("offset") ?? 0
        if let prefetch = try fields.stringArray("prefetch") {
            for keyPath in prefetch { try entity.checkKeyPath(keyPath) }
            request.relationshipKeyPathsForPrefetching = prefetch
        }
    }

    private func sortDescriptors(_ fields: RequestFields, entity: EntityDescription) throws(WireError) -> [FetchSortDescriptor]? {
        guard let elements = try fields.array("sort") else { return nil }
        var result: [FetchSortDescriptor] = []
        for element in elements {
            let sortFields = RequestFields(element, op: "fetch: sort")
            let key: String
            var ascending = true
            var caseInsensitive = false
            switch element {
            case .string(let name):
                key = name
            case .object:
                key = try sortFields.requiredString("key")
                ascending = try sortFields.bool("ascending") ?? true
                caseInsensitive = try sortFields.bool("caseInsensitive") ?? false
            default:
                throw WireError(.badRequest, "fetch: each sort must be {\"key\",\"ascending\"?,\"caseInsensitive\"?} or a key, not \(element.typeName)")
            }
            try entity.checkKeyPath(key)
            result.append(FetchSortDescriptor(key: key, ascending: ascending,
                                              comparison: caseInsensitive ? .caseInsensitiveCompare : .compare))
        }
        return result
    }

    /// Runs a fetch, turning PersistKit errors into wire errors.
    func run<T>(_ body: () throws -> T) throws(WireError) -> T {
        do {
            return try body()
        } catch {
            throw WireError(persistenceError: error)
        }
    }
}
