import PersistKit

extension Session {
    /// `fetch {entity, predicate?, arguments?, sort?, limit?, offset?, properties?, resultType?,
    /// groupBy?, having?, distinct?, prefetch?}` → `{"objects"}` | `{"ids"}` | `{"count"}` | `{"rows"}`.
    func fetch(_ body: JSON, in context: ManagedObjectContext) throws(WireError) -> JSON {
        let fields = RequestFields(body, op: "fetch")
        let entity = try fields.entity(in: state.container.managedObjectModel)
        let resultType = try fields.string("resultType") ?? "objects"
        if resultType == "dictionaries" { return try dictionaries(fields, entity: entity, in: context) }
        if fields.has("groupBy") || fields.has("having") {
            throw WireError(.badRequest, "fetch: groupBy and having need resultType \"dictionaries\"")
        }
        let properties = try fields.stringArray("properties")
        if let properties { for name in properties { _ = try entity.checkProperty(name) } }
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
        default:
            throw WireError(.badRequest, "fetch: resultType must be \"objects\", \"ids\", \"count\" or \"dictionaries\", not \"\(resultType)\"")
        }
    }

    /// `fetch` with `resultType: "dictionaries"` → `{"rows":[…]}`: `properties` are key paths
    /// or aggregates `{"name":"n","function":"count|sum|average|min|max","key":"abv","type"?:"double"}`,
    /// `groupBy` key paths, `having` a predicate over grouped key paths and aggregate names.
    private func dictionaries(_ fields: RequestFields, entity: EntityDescription, in context: ManagedObjectContext) throws(WireError) -> JSON {
        let request = FetchRequest<[String: Any]>(entity: entity)
        try configure(request, fields: fields, entity: entity)
        request.resultType = .dictionaryResultType
        request.returnsDistinctResults = try fields.bool("distinct") ?? false
        var names: [String] = []
        if let properties = try fields.array("properties") {
            var toFetch: [Any] = []
            for property in properties {
                switch property {
                case .string(let keyPath):
                    try entity.checkKeyPath(keyPath)
                    toFetch.append(keyPath)
                    names.append(keyPath)
                case .object:
                    let description = try aggregate(property, entity: entity)
                    toFetch.append(description)
                    names.append(description.name)
                default:
                    throw WireError(.badRequest, "fetch: each property is a key path or an aggregate object, not \(property.typeName)")
                }
            }
            request.propertiesToFetch = toFetch
        } else {
            names = entity.allProperties.filter { !$0.isTransient && !(($0 as? RelationshipDescription)?.isToMany ?? false) }.map(\.name)
        }
        if let groupBy = try fields.stringArray("groupBy") {
            for keyPath in groupBy { try entity.checkKeyPath(keyPath) }
            request.propertiesToGroupBy = groupBy
        }
        if let having = try fields.string("having") {
            request.havingPredicate = try parsePredicate(having, arguments: nil, op: "fetch", entity: nil)
        }
        let rows = try run { try context.fetch(request) }
        return .object(["rows": .array(rows.map { row in
            .object(names.map { name in JSON.Member(name, WireValueCoder.encode(any: row[name] ?? nil)) })
        })])
    }

    private func aggregate(_ json: JSON, entity: EntityDescription) throws(WireError) -> ExpressionDescription {
        let fields = RequestFields(json, op: "fetch: aggregate")
        let name = try fields.requiredString("name")
        let function = try fields.requiredString("function")
        guard ["count", "sum", "average", "min", "max"].contains(function) else {
            throw WireError(.badRequest, "fetch: aggregate function must be count, sum, average, min or max, not \"\(function)\"")
        }
        let key = try fields.requiredString("key")
        try entity.checkKeyPath(key)
        var type: AttributeType = function == "count" ? .integer64 : (function == "average" ? .double : .double)
        if function == "min" || function == "max" || function == "sum",
           let attribute = entity.attributesByName[key] { type = attribute.attributeType }
        if let typeName = try fields.string("type") {
            guard let named = AttributeType(rawValue: typeName) else {
                throw WireError(.badRequest, "fetch: unknown aggregate type \"\(typeName)\"")
            }
            type = named
        }
        return ExpressionDescription(name: name, expression: .function(function + ":", [.keyPath(key)]), resultType: type)
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

    func sortDescriptors(_ fields: RequestFields, entity: EntityDescription) throws(WireError) -> [FetchSortDescriptor]? {
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
