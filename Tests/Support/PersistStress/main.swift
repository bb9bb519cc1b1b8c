import Foundation
import PersistKit

// PersistStress: a small program that opens a shared SQLite store with PersistKit and does
// one job given on its command line, so the sharing tests can run real separate processes.
//
//   PersistStress model                                   print the model as JSON
//   PersistStress create  --store PATH                    create the store and the shared counter
//   PersistStress stress  --store PATH --worker N --seconds S [--history]
//        until S seconds pass: each save increments the counter "shared" by one (retrying
//        optimistic-locking conflicts) and inserts Item(worker: N, seq: k); prints
//        {"increments":…,"inserted":…,"conflictRetries":…,"errors":[…]}
//   PersistStress update  --store PATH --name NAME [--set key=value]… [--history] [--author A]
//        sets attributes of the counter NAME (integers, or strings when not a number)
//   PersistStress insert  --store PATH --name NAME [--history]   inserts a counter NAME
//   PersistStress delete  --store PATH --name NAME [--history]   deletes the counter NAME
//   PersistStress hold    --store PATH
//        takes the store's write lock (BEGIN IMMEDIATE), prints {"holding":true}, keeps it
//        until its standard input ends, then commits and prints {"released":true}

/// The model both this program and the tests use: the tests read it from `PersistStress model`.
func makeModel() -> ManagedObjectModel {
    let counter = EntityDescription(name: "Counter", properties: [
        AttributeDescription(name: "name", type: .string, isOptional: false),
        AttributeDescription(name: "value", type: .integer64, defaultValue: .integer(0)),
        AttributeDescription(name: "note", type: .string),
        AttributeDescription(name: "score", type: .integer64, defaultValue: .integer(0)),
    ])
    (counter.properties[0] as? AttributeDescription)?.preservesValueInHistoryOnDeletion = true
    counter.uniquenessConstraints = [["name"]]
    let item = EntityDescription(name: "Item", properties: [
        AttributeDescription(name: "worker", type: .integer64, isOptional: false),
        AttributeDescription(name: "seq", type: .integer64, isOptional: false),
    ])
    return ManagedObjectModel(entities: [counter, item])
}

struct Options {
    var command = ""
    var store = ""
    var worker: Int64 = 0
    var seconds = 3.0
    var history = false
    var name = "shared"
    var sets: [(String, String)] = []
    var author: String?
}

func parse(_ arguments: [String]) -> Options {
    var options = Options()
    var rest = arguments.dropFirst()
    options.command = rest.popFirst() ?? ""
    while let flag = rest.popFirst() {
        switch flag {
        case "--store": options.store = rest.popFirst() ?? ""
        case "--worker": options.worker = Int64(rest.popFirst() ?? "") ?? 0
        case "--seconds": options.seconds = Double(rest.popFirst() ?? "") ?? 3
        case "--history": options.history = true
        case "--name": options.name = rest.popFirst() ?? ""
        case "--author": options.author = rest.popFirst()
        case "--set":
            let pair = (rest.popFirst() ?? "").split(separator: "=", maxSplits: 1).map(String.init)
            if pair.count == 2 { options.sets.append((pair[0], pair[1])) }
        default: fail("unknown argument \(flag)")
        }
    }
    return options
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("PersistStress: \(message)\n".utf8))
    exit(2)
}

func printJSON(_ object: [String: Any]) {
    guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else { fail("cannot encode output") }
    print(String(decoding: data, as: UTF8.self))
}

func openContext(_ options: Options) -> ManagedObjectContext {
    let coordinator = PersistentStoreCoordinator(managedObjectModel: makeModel())
    do {
        try coordinator.addPersistentStore(type: .sqlite, at: URL(fileURLWithPath: options.store),
                                           options: StoreOptions(persistentHistoryTracking: options.history, busyTimeout: 10))
    } catch {
        fail("cannot open \(options.store): \(error)")
    }
    let context = ManagedObjectContext(concurrencyType: .privateQueue)
    context.persistentStoreCoordinator = coordinator
    context.name = "PersistStress"
    context.transactionAuthor = options.author ?? "worker\(options.worker)"
    return context
}

/// The entity `name` of the context's model (entities must come from the coordinator's model).
func entity(_ name: String, _ context: ManagedObjectContext) -> EntityDescription {
    guard let entity = context.persistentStoreCoordinator?.managedObjectModel.entitiesByName[name] else { fail("no entity \(name)") }
    return entity
}

func counter(named name: String, in context: ManagedObjectContext) throws -> ManagedObject? {
    let request = FetchRequest<ManagedObject>(entityName: "Counter")
    request.predicate = .equal("name", .string(name))
    return try context.fetch(request).first
}

let options = parse(CommandLine.arguments)
switch options.command {
case "model":
    do {
        let model = makeModel()
        try model.freeze()
        print(String(decoding: try model.jsonRepresentation(), as: UTF8.self))
    } catch { fail("\(error)") }

case "create":
    let context = openContext(options)
    do {
        try context.performAndWait {
            let shared = ManagedObject(entity: entity("Counter", context), insertInto: context)
            shared.setValue("shared", forKey: "name")
            try context.save()
        }
    } catch { fail("\(error)") }
    printJSON(["created": true])

case "stress":
    let context = openContext(options)
    let deadline = Date().addingTimeInterval(options.seconds)
    var increments = 0, inserted = 0, conflictRetries = 0
    var errors: [String] = []
    context.performAndWait {
        // The model is the coordinator's: entities must come from it.
        let itemEntity = entity("Item", context)
        var seq: Int64 = 0
        while Date() < deadline {
            do {
                guard let shared = try counter(named: "shared", in: context) else { fail("no shared counter; run create first") }
                shared.setValue((shared.value(forKey: "value") as? Int64 ?? 0) + 1, forKey: "value")
                let item = ManagedObject(entity: itemEntity, insertInto: context)
                item.setValue(options.worker, forKey: "worker")
                item.setValue(seq, forKey: "seq")
                try context.save()
                increments += 1
                inserted += 1
                seq += 1
            } catch let error as PersistenceError where error.code == .managedObjectMerge {
                // Another process incremented first: start again from the stored value.
                conflictRetries += 1
                context.rollback()
                context.reset()
            } catch {
                errors.append("\(error)")
                context.rollback()
                context.reset()
                if errors.count > 20 { break }
            }
        }
    }
    printJSON(["increments": increments, "inserted": inserted, "conflictRetries": conflictRetries, "errors": errors])

case "update", "insert", "delete":
    let context = openContext(options)
    do {
        try context.performAndWait {
            let object: ManagedObject
            if options.command == "insert" {
                object = ManagedObject(entity: entity("Counter", context), insertInto: context)
                object.setValue(options.name, forKey: "name")
            } else {
                guard let found = try counter(named: options.name, in: context) else { fail("no counter named \(options.name)") }
                object = found
            }
            if options.command == "delete" {
                context.delete(object)
            } else {
                for (key, text) in options.sets {
                    if let number = Int64(text) { object.setValue(number, forKey: key) } else { object.setValue(text, forKey: key) }
                }
            }
            try context.save()
        }
    } catch { fail("\(error)") }
    printJSON([options.command: options.name])

case "hold":
    // Plain SQLite, as any other program on the store would: the write lock, and nothing else.
    do {
        let connection = try SQLiteConnection(path: options.store, flags: [.readWrite, .noMutex])
        connection.setBusyTimeout(seconds: 10)
        try connection.execute("BEGIN IMMEDIATE TRANSACTION")
        // Unbuffered, so the test reads it at once.
        FileHandle.standardOutput.write(Data(#"{"holding":true}"#.utf8 + [0x0A]))
        _ = FileHandle.standardInput.readDataToEndOfFile()
        try connection.execute("COMMIT TRANSACTION")
        try connection.close()
    } catch { fail("\(error)") }
    printJSON(["released": true])

default:
    fail("usage: PersistStress model|create|stress|update|insert|delete|hold --store PATH …")
}
