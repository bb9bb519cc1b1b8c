import Foundation
import PersistKit

// persistd-bench: PersistKit against raw SQLite, in the same process and the same run.
// `make bench` runs it release-built and leaves the JSON at .build/bench.json.

enum Bench {
    /// The deterministic value of column `column` of row `row`, in 0..<1000.
    static func value(_ row: Int64, _ column: Int) -> Int64 {
        (row &* 7919 &+ Int64(column) &* 104_729) % 1000
    }

    /// The model of every workload but 5: `Item` with ten Integer 64 attributes `i0`…`i9`, as
    /// Bench.model.json also declares it for the class the PersistKitCodegen plugin generates
    /// (registered only by workload 2's generated-class row).
    static func model(indexed: Bool) -> ManagedObjectModel {
        let item = EntityDescription(name: "Item", properties: (0..<10).map {
            AttributeDescription(name: "i\($0)", type: .integer64, isOptional: false)
        })
        if indexed { item.indexes = [FetchIndexDescription(name: "byI7", elements: [.init(propertyName: "i7")])] }
        return ManagedObjectModel(entities: [item])
    }

    static func open(_ url: URL, indexed: Bool = false, generatedClasses: Bool = false) throws -> ManagedObjectContext {
        let model = model(indexed: indexed)
        if generatedClasses { BenchClasses.register(in: model) }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .sqlite, at: url)
        let context = ManagedObjectContext(concurrencyType: .privateQueue)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    static func remove(_ url: URL) {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
    }

    static let keys = (0..<10).map { "i\($0)" }

    /// Workload 5's model: `Parent` (`p0`, to-many `children`) and `Child` (`c0`, to-one `parent`),
    /// as Family.model.json also declares them for the classes the plugin generates.
    static func familyModel() -> ManagedObjectModel {
        let parent = EntityDescription(name: "Parent", properties: [
            AttributeDescription(name: "p0", type: .integer64, isOptional: false),
            RelationshipDescription(name: "children", destination: "Child", toMany: true, inverse: "parent"),
        ])
        let child = EntityDescription(name: "Child", properties: [
            AttributeDescription(name: "c0", type: .integer64, isOptional: false),
            RelationshipDescription(name: "parent", destination: "Parent", inverse: "children"),
        ])
        return ManagedObjectModel(entities: [parent, child])
    }

    static func openFamily(_ url: URL, generatedClasses: Bool = false) throws -> ManagedObjectContext {
        let model = familyModel()
        if generatedClasses { FamilyClasses.register(in: model) }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .sqlite, at: url)
        let context = ManagedObjectContext(concurrencyType: .privateQueue)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    /// Copies the store at `url` (with its WAL, if one is left) to `destination`, replacing it.
    static func copyStore(_ url: URL, to destination: URL) throws {
        remove(destination)
        for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: url.path + suffix) {
            try FileManager.default.copyItem(atPath: url.path + suffix, toPath: destination.path + suffix)
        }
    }

    /// Workloads 9 and 10: `change` applied to `count` objects of workload 1 in one context, then
    /// one save, against `rawChange` on a copy of the same store; the samples of ours (0) and of
    /// raw (1). Each round starts from a fresh copy of one store made once; our side's objects
    /// are fetched before the timed part (fetching is workload 2's), and the context is freed
    /// within it, as raw's connection is closed within its own.
    static func changeFetchedItems(_ count: Int, named name: String, in directory: URL, runs: Int,
                                   _ change: (ManagedObjectContext, [ManagedObject]) throws -> Void,
                                   raw rawChange: (RawSQLite) -> Void) throws -> [[Double]] {
        let template = directory.appendingPathComponent("\(name)-template.sqlite")
        try insertObjects(count, into: try open(template))
        let oursURL = directory.appendingPathComponent("\(name).sqlite"), rawURL = directory.appendingPathComponent("\(name)-raw.sqlite")
        var prepared: (context: ManagedObjectContext, objects: [ManagedObject])?
        var raw: RawSQLite?
        return try Measure.interleaved(runs: runs, count: 2, prepare: { which in
            let url = which == 0 ? oursURL : rawURL
            try copyStore(template, to: url)
            if which == 0 {
                let context = try open(url)
                let objects = try context.performAndWait { try context.fetch(FetchRequest<ManagedObject>(entityName: "Item")) }
                prepared = (context, objects)
            } else {
                raw = RawSQLite(path: url.path)
            }
        }) { which in
            if which == 0 {
                guard let (context, objects) = prepared else { return }
                try context.performAndWait {
                    try change(context, objects)
                    try context.save()
                }
                prepared = nil
            } else if let connection = raw {
                rawChange(connection)
                raw = nil
            }
        }
    }

    /// Saves `count` parents with `childrenEach` children each.
    static func insertFamilies(_ count: Int, childrenEach: Int, at url: URL) throws {
        remove(url)
        let context = try openFamily(url)
        let model = context.persistentStoreCoordinator?.managedObjectModel
        guard let parentEntity = model?.entitiesByName["Parent"], let childEntity = model?.entitiesByName["Child"] else { return }
        try context.performAndWait {
            for row in 0..<Int64(count) {
                let parent = ManagedObject(entity: parentEntity, insertInto: context)
                parent.setValue(row, forKey: "p0")
                for index in 0..<Int64(childrenEach) {
                    let child = ManagedObject(entity: childEntity, insertInto: context)
                    child.setValue(row * 100 + index, forKey: "c0")
                    child.setValue(parent, forKey: "parent")
                }
            }
            try context.save()
        }
    }

    /// Workload 1 through the generated class `Item`: `Item.insert(into:)` and its properties.
    static func insertItems(_ count: Int, into context: ManagedObjectContext) throws {
        try context.performAndWait {
            for row in 0..<Int64(count) {
                let item = Item.insert(into: context)
                item.i0 = value(row, 0); item.i1 = value(row, 1); item.i2 = value(row, 2); item.i3 = value(row, 3)
                item.i4 = value(row, 4); item.i5 = value(row, 5); item.i6 = value(row, 6); item.i7 = value(row, 7)
                item.i8 = value(row, 8); item.i9 = value(row, 9)
            }
            try context.save()
        }
    }

    static func insertObjects(_ count: Int, into context: ManagedObjectContext) throws {
        guard let entity = context.persistentStoreCoordinator?.managedObjectModel.entitiesByName["Item"] else { return }
        try context.performAndWait {
            for row in 0..<Int64(count) {
                let object = ManagedObject(entity: entity, insertInto: context)
                for (column, key) in keys.enumerated() { object.setValue(value(row, column), forKey: key) }
            }
            try context.save()
        }
    }
}

// `persistd-bench --memory-child ours|array|raw PATH`: workload 8's fetch in a fresh process, whose
// peak RSS (VmHWM) is then its own; prints that peak in MiB.
if CommandLine.arguments.count == 4 && CommandLine.arguments[1] == "--memory-child" {
    let url = URL(fileURLWithPath: CommandLine.arguments[3])
    var sum: Int64 = 0
    if CommandLine.arguments[2] == "raw" {
        sum = RawSQLite(path: url.path).selectAll("SELECT Z_PK, Z_ENT, Z_OPT, " + RawSQLite.columns.joined(separator: ", ") + " FROM ZITEM")
    } else {
        let context = try Bench.open(url)
        try context.performAndWait {
            let request = FetchRequest<ManagedObject>(entityName: "Item")
            request.fetchBatchSize = 1_000
            if CommandLine.arguments[2] == "array" {
                // fetch(_:) returns a Swift array: every object exists at once.
                for object in try context.fetch(request) { sum &+= object.int64(forKey: "i0") ?? 0 }
            } else {
                // fetchBatched(_:): objects created (and released) one batch at a time.
                for object in try context.fetchBatched(request) { sum &+= object.int64(forKey: "i0") ?? 0 }
            }
        }
    }
    print(SocketBench.residentKiB(of: getpid(), peak: true) / 1024, sum)
    exit(0)
}

var runs = 5
var jsonPath: String?
var scale = 1
var only: String?
/// Measured seconds of each socket load run (workload 7).
var socketSeconds = 1.0
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--runs": runs = Int(arguments.next() ?? "") ?? runs
    case "--json": jsonPath = arguments.next()
    case "--quick": scale = 10
    case "--seconds": socketSeconds = Double(arguments.next() ?? "") ?? socketSeconds
    case "--only": only = arguments.next()
    default:
        FileHandle.standardError.write(Data("usage: persistd-bench [--runs N] [--json PATH] [--quick] [--only WORKLOAD[,WORKLOAD…]] [--seconds S]\n".utf8))
        exit(2)
    }
}

// SQLite's process-wide settings before either side touches SQLite, whichever runs first: the
// raw baseline shares this process, and with it the settings PersistKit gives SQLite.
SQLiteLibrary.prepare()
let directory = FileManager.default.temporaryDirectory.appendingPathComponent("persistd-bench-\(ProcessInfo.processInfo.processIdentifier)")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }
var rows: [BenchmarkRow] = []
/// Whether workload `number` runs (all of them unless `--only N` or `--only N,M,…` names some;
/// several run in the order of the full run, in one process, as they do there).
@MainActor func wanted(_ number: String) -> Bool { only.map { $0.split(separator: ",").contains(Substring(number)) } ?? true }

@MainActor func report(_ row: BenchmarkRow) {
    rows.append(row)
    let name = row.workload.padding(toLength: 52, withPad: " ", startingAt: 0)
    print(name + String(format: "%12.2f %12.2f %7.2fx  ", row.ours, row.baseline, row.ratio)
          + "\(row.better == "lower" ? "<=" : ">=") \(row.target) \(row.meetsTarget ? "met" : "MISSED")  [\(row.unit) vs \(row.baselineName)]")
}
print("workload (median of \(runs) runs)".padding(toLength: 52, withPad: " ", startingAt: 0) + "        ours     baseline    ratio  target")

if wanted("1") {
    // 1. Insert 50,000 objects of 10 Integer 64 attributes, one save.
    let insertCount = 50_000 / scale
    let insertURL = directory.appendingPathComponent("insert.sqlite"), rawInsertURL = directory.appendingPathComponent("insert-raw.sqlite")
    // 0: setValue(_:forKey:), 1: the generated class Item (Bench.model.json), 2: raw.
    let samples = try Measure.interleaved(runs: runs, count: 3) { which in
        if which == 0 {
            Bench.remove(insertURL)
            try Bench.insertObjects(insertCount, into: try Bench.open(insertURL))
        } else if which == 1 {
            Bench.remove(insertURL)
            try Bench.insertItems(insertCount, into: try Bench.open(insertURL, generatedClasses: true))
        } else {
            Bench.remove(rawInsertURL)
            let raw = RawSQLite(path: rawInsertURL.path)
            raw.createItemTable()
            raw.insertItems(insertCount)
        }
    }
    report(Measure.row("1 insert \(insertCount) objects, one save", target: 1.5, ours: samples[0], baseline: samples[2], paired: true,
                       unitsPerRound: insertCount))
    report(Measure.row("1 insert \(insertCount) objects, one save, generated class", target: 1.5, ours: samples[1], baseline: samples[2],
                       paired: true, unitsPerRound: insertCount))
}

// The 200,000-row store the read workloads share (and one with a fetch index).
let fetchCount = 200_000 / scale
let storeURL = directory.appendingPathComponent("items.sqlite"), indexedURL = directory.appendingPathComponent("items-indexed.sqlite")
if wanted("2") || wanted("3") || wanted("4") {
    try Bench.insertObjects(fetchCount, into: try Bench.open(storeURL))
    try Bench.insertObjects(fetchCount, into: try Bench.open(indexedURL, indexed: true))
}
var checksum: Int64 = 0
let fetchRawDB = RawSQLite(path: storeURL.path)
let columnList = "Z_PK, Z_ENT, Z_OPT, " + RawSQLite.columns.joined(separator: ", ")

if wanted("2") {
    // 2. Fetch every object and read all 10 attributes.
    // 0: value(forKey:), 1: int64(forKey:), 2: the properties of the generated class Item
    // (Bench.model.json), 3: raw; each round runs all four.
    let samples = try Measure.interleaved(runs: runs, count: 4) { which in
        switch which {
        case 3:
            checksum &+= fetchRawDB.selectAll("SELECT \(columnList) FROM ZITEM")
        case 2:
            let context = try Bench.open(storeURL, generatedClasses: true)
            try context.performAndWait {
                for item in try context.fetch(Item.fetchRequest()) {
                    checksum &+= item.i0 &+ item.i1 &+ item.i2 &+ item.i3 &+ item.i4
                    checksum &+= item.i5 &+ item.i6 &+ item.i7 &+ item.i8 &+ item.i9
                }
            }
        default:
            let context = try Bench.open(storeURL)
            try context.performAndWait {
                for object in try context.fetch(FetchRequest<ManagedObject>(entityName: "Item")) {
                    if which == 0 {
                        for key in Bench.keys { checksum &+= object.value(forKey: key) as? Int64 ?? 0 }
                    } else {
                        for key in Bench.keys { checksum &+= object.int64(forKey: key) ?? 0 }
                    }
                }
            }
        }
    }
    report(Measure.row("2 fetch \(fetchCount) objects, value(forKey:)", target: 1.5, ours: samples[0], baseline: samples[3], paired: true,
                       unitsPerRound: fetchCount))
    report(Measure.row("2 fetch \(fetchCount) objects, int64(forKey:)", target: 1.5, ours: samples[1], baseline: samples[3], paired: true,
                       unitsPerRound: fetchCount))
    report(Measure.row("2 fetch \(fetchCount) objects, generated class", target: 1.5, ours: samples[2], baseline: samples[3], paired: true,
                       unitsPerRound: fetchCount))
}

if wanted("3") {
    // 3. Predicate, sort and limit, without and with a fetch index.
    for (label, url) in [("no index", storeURL), ("fetch index", indexedURL)] {
        let predicate = FetchPredicate.comparison(.keyPath("i3"), .greaterThan, .constant(.integer(500)))
            && .comparison(.keyPath("i5"), .lessThan, .constant(.integer(300)))
        let context = try Bench.open(url, indexed: url == indexedURL)
        let raw = RawSQLite(path: url.path)
        let samples = try Measure.interleaved(runs: runs, count: 2) { which in
            guard which == 0 else {
                return checksum &+= raw.selectAll("SELECT \(columnList) FROM ZITEM WHERE ZI3 > ? AND ZI5 < ? ORDER BY ZI7 LIMIT 100", bind: [500, 300])
            }
            let request = FetchRequest<ManagedObject>(entityName: "Item")
            request.predicate = predicate
            request.sortDescriptors = [FetchSortDescriptor(key: "i7")]
            request.fetchLimit = 100
            try context.performAndWait {
                for object in try context.fetch(request) { checksum &+= object.value(forKey: "i7") as? Int64 ?? 0 }
                context.reset()
            }
        }
        report(Measure.row("3 predicate+sort+limit 100 (\(label))", target: 1.3, ours: samples[0], baseline: samples[1], paired: true,
                           unitsPerRound: 1))
    }
}

if wanted("4") {
    // 4. 100,000 lookups by object ID.
    let lookupCount = 100_000 / scale
    var generator = SeededGenerator(seed: 8)
    let lookupKeys = (0..<lookupCount).map { _ in Int64.random(in: 1...Int64(fetchCount), using: &generator) }
    let lookupContext = try Bench.open(storeURL)
    guard let itemEntity = lookupContext.persistentStoreCoordinator?.managedObjectModel.entitiesByName["Item"],
          let storeIdentifier = lookupContext.persistentStoreCoordinator?.persistentStores.first?.identifier else { exit(1) }
    let lookupIDs = lookupKeys.map { ManagedObjectID(entity: itemEntity, storeIdentifier: storeIdentifier, primaryKey: $0) }
    let samples = try Measure.interleaved(runs: runs, count: 2) { which in
        guard which == 0 else { return checksum &+= fetchRawDB.lookups(lookupKeys) }
        try lookupContext.performAndWait {
            for id in lookupIDs { checksum &+= try lookupContext.existingObject(with: id).value(forKey: "i0") as? Int64 ?? 0 }
            lookupContext.reset()
        }
    }
    report(Measure.row("4 \(lookupCount) lookups by object ID", target: 1.5, ours: samples[0], baseline: samples[1], paired: true,
                       unitsPerRound: lookupCount))
}

if wanted("6") {
    // 6. 1,000 saves of one object each.
    let saveCount = 1_000 / scale
    let savesURL = directory.appendingPathComponent("saves.sqlite"), rawSavesURL = directory.appendingPathComponent("saves-raw.sqlite")
    Bench.remove(savesURL)
    let savesContext = try Bench.open(savesURL)
    Bench.remove(rawSavesURL)
    let rawSaves = RawSQLite(path: rawSavesURL.path)
    rawSaves.createItemTable()
    var nextKey: Int64 = 1
    let samples = try Measure.interleaved(runs: runs, count: 2) { which in
        if which == 0 {
            for _ in 0..<saveCount { try Bench.insertObjects(1, into: savesContext) }
        } else {
            rawSaves.singleRowTransactions(saveCount, firstKey: nextKey)
            nextKey += Int64(saveCount)
        }
    }
    report(Measure.row("6 \(saveCount) saves of one object", target: 1.2, ours: samples[0], baseline: samples[1], paired: true,
                       unitsPerRound: saveCount))
}

if wanted("5") {
    // 5. 10,000 parents x 10 children: fetch the parents prefetching `children`, touch every child.
    let parentCount = 10_000 / scale
    let familyURL = directory.appendingPathComponent("family.sqlite")
    try Bench.insertFamilies(parentCount, childrenEach: 10, at: familyURL)
    let raw = RawSQLite(path: familyURL.path)
    // 0: value(forKey:), 1: the generated classes Parent and Child (Family.model.json), 2: raw.
    let samples = try Measure.interleaved(runs: runs, count: 3) { which in
        if which == 2 {
            checksum &+= raw.selectAll("SELECT Z_PK, Z_ENT, Z_OPT, ZP0 FROM ZPARENT")
            checksum &+= raw.selectAll("SELECT Z_PK, Z_ENT, Z_OPT, ZC0, ZPARENT FROM ZCHILD WHERE ZPARENT IS NOT NULL")
            return
        }
        if which == 1 {
            let context = try Bench.openFamily(familyURL, generatedClasses: true)
            try context.performAndWait {
                let request = Parent.fetchRequest()
                request.relationshipKeyPathsForPrefetching = ["children"]
                for parent in try context.fetch(request) {
                    checksum &+= parent.p0
                    for child in parent.children { checksum &+= child.c0 }
                }
            }
            return
        }
        let context = try Bench.openFamily(familyURL)
        try context.performAndWait {
            let request = FetchRequest<ManagedObject>(entityName: "Parent")
            request.relationshipKeyPathsForPrefetching = ["children"]
            for parent in try context.fetch(request) {
                checksum &+= parent.int64(forKey: "p0") ?? 0
                for child in parent.value(forKey: "children") as? Set<ManagedObject> ?? [] { checksum &+= child.int64(forKey: "c0") ?? 0 }
            }
        }
    }
    report(Measure.row("5 \(parentCount) parents x 10 children, prefetch", target: 2.0, ours: samples[0], baseline: samples[2], paired: true,
                       unitsPerRound: parentCount * 11))
    report(Measure.row("5 \(parentCount) parents x 10 children, prefetch, generated classes", target: 2.0, ours: samples[1], baseline: samples[2],
                       paired: true, unitsPerRound: parentCount * 11))
}

if wanted("9") {
    // 9. Delete 50,000 objects of workload 1, one save. Baseline: raw SQLite, one transaction,
    // one prepared DELETE by key. Not among the issue's workloads: deleting is the other half
    // of a store's writes.
    let deleteCount = 50_000 / scale
    let samples = try Bench.changeFetchedItems(deleteCount, named: "delete", in: directory, runs: runs) { context, objects in
        for object in objects { context.delete(object) }
    } raw: { raw in
        raw.deleteItems(deleteCount)
    }
    report(Measure.row("9 delete \(deleteCount) objects, one save", target: 1.5, ours: samples[0], baseline: samples[1], paired: true,
                       unitsPerRound: deleteCount))
}

if wanted("10") {
    // 10. Change one attribute of each of 50,000 objects of workload 1, one save. Baseline: raw
    // SQLite, one transaction, one prepared UPDATE of the column and the version by key and
    // version. Not among the issue's workloads, as 9.
    let updateCount = 50_000 / scale
    let samples = try Bench.changeFetchedItems(updateCount, named: "update", in: directory, runs: runs) { _, objects in
        for object in objects { object.setValue((object.int64(forKey: "i3") ?? 0) + 1, forKey: "i3") }
    } raw: { raw in
        raw.updateItems(updateCount)
    }
    report(Measure.row("10 update \(updateCount) objects, one save", target: 1.5, ours: samples[0], baseline: samples[1], paired: true,
                       unitsPerRound: updateCount))
}

if wanted("7") || wanted("8") {
    do {
        try SocketWorkloads(directory: directory, runs: runs, seconds: socketSeconds / Double(scale == 1 ? 1 : 3), quick: scale > 1,
                            wanted: wanted, report: report).run()
    } catch {
        print("workloads 7-8 did not run: \(error)")
    }
}

print("checksum \(checksum)")
if let jsonPath {
    struct Report: Codable { var machine: String; var command: String; var runs: Int; var rows: [BenchmarkRow] }
    let cpu = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8))?.split(separator: "\n")
        .first { $0.hasPrefix("model name") }?.split(separator: ":").last.map { $0.trimmingCharacters(in: .whitespaces) } ?? "unknown CPU"
    let machine = "\(cpu), \(ProcessInfo.processInfo.activeProcessorCount) cores, "
        + "\(ProcessInfo.processInfo.physicalMemory / 1_073_741_824) GiB, \(ProcessInfo.processInfo.operatingSystemVersionString)"
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    try encoder.encode(Report(machine: machine, command: CommandLine.arguments.joined(separator: " "), runs: runs, rows: rows)).write(to: URL(fileURLWithPath: jsonPath))
}
