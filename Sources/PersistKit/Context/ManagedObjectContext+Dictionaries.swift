import Foundation

extension ManagedObjectContext {
    /// Dictionary results, computed by the store (``PersistentStore/fetchDictionaries(_:)``).
    ///
    /// As in Core Data, dictionary results reflect what is saved in the store: unsaved changes
    /// of the context are not included (`includesPendingChanges` does not apply to them).
    /// Attribute values come as the attribute's Swift type, to-one relationships as the
    /// destination's ``ManagedObjectID``, expression values as their result type's Swift type;
    /// `nil` values leave their key out.
    func fetchDictionaries<T>(_ request: FetchRequest<T>, entity: EntityDescription) throws -> [[String: Any]] {
        let columns = try dictionaryColumns(request.propertiesToFetch, entity: entity, what: "propertiesToFetch")
            ?? entity.slots.filter { !$0.isTransient }.map { .keyPath($0.name) }
        let groupBy = try dictionaryColumns(request.propertiesToGroupBy, entity: entity, what: "propertiesToGroupBy") ?? []
        let storeRequest = StoreDictionaryRequest(fetch: request.storeRequest(for: entity), columns: columns, groupBy: groupBy,
                                                  having: request.havingPredicate, distinct: request.returnsDistinctResults)
        let rows = try rootStore(for: entity).fetchDictionaries(storeRequest)
        let attributes: [String: AttributeDescription?] = Dictionary(uniqueKeysWithValues: columns.map { column in
            switch column {
            case .keyPath(let path): return (path, Self.attribute(at: path, from: entity))
            case .expression(let name, _, let type): return (name, AttributeDescription(name: name, type: type))
            }
        })
        return rows.map { row in
            var dictionary: [String: Any] = [:]
            for (key, value) in row {
                if case .object(let id) = value {
                    dictionary[key] = id
                } else if let attribute = attributes[key] ?? nil {
                    if attribute.attributeType == .transformable, case .data(let data) = value {
                        dictionary[key] = (try? AttributeValueTransformers.transformer(for: attribute).reverseTransformedValue(data)) ?? data
                    } else {
                        dictionary[key] = attribute.attributeType.objectValue(from: value)
                    }
                } else {
                    dictionary[key] = value.anyValue
                }
            }
            return dictionary
        }
    }

    /// The store columns for `propertiesToFetch` or `propertiesToGroupBy`, or `nil` for `nil`.
    private func dictionaryColumns(_ properties: [Any]?, entity: EntityDescription, what: String) throws -> [StoreDictionaryRequest.Column]? {
        guard let properties else { return nil }
        return try properties.map { property in
            switch property {
            case let description as ExpressionDescription:
                return .expression(name: description.name, expression: description.expression, resultType: description.resultType)
            case let description as PropertyDescription:
                return try keyPathColumn(description.name, entity: entity, what: what)
            case let name as String:
                return try keyPathColumn(name, entity: entity, what: what)
            default:
                throw PersistenceError(.persistentStoreOperation,
                                       "\(what) holds a \(type(of: property)); it takes names, key paths, PropertyDescriptions and ExpressionDescriptions")
            }
        }
    }

    private func keyPathColumn(_ path: String, entity: EntityDescription, what: String) throws -> StoreDictionaryRequest.Column {
        var current = entity
        let components = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        for (index, component) in components.enumerated() {
            guard let property = current.propertiesByName[component] else {
                throw PersistenceError(.persistentStoreOperation, "\(what) names \"\(path)\", but entity \(current.name) has no property \(component)", key: path)
            }
            if let relationship = property as? RelationshipDescription {
                if relationship.isToMany {
                    throw PersistenceError(.persistentStoreOperation, "\(what) names \"\(path)\", which goes through the to-many relationship \(component)", key: path)
                }
                guard let destination = relationship.destinationEntity else { break }
                current = destination
            } else if index != components.count - 1 {
                throw PersistenceError(.persistentStoreOperation, "\(what) names \"\(path)\", but \(component) is an attribute", key: path)
            }
        }
        return .keyPath(path)
    }

    /// The attribute a key path ends at, or `nil` if it ends at a relationship.
    static func attribute(at path: String, from entity: EntityDescription) -> AttributeDescription? {
        var current = entity
        for component in path.split(separator: ".") {
            switch current.propertiesByName[String(component)] {
            case let attribute as AttributeDescription: return attribute
            case let relationship as RelationshipDescription:
                guard let destination = relationship.destinationEntity else { return nil }
                current = destination
            default: return nil
            }
        }
        return nil
    }
}
