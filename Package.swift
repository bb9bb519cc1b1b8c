// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "persistd",
    products: [
        .library(name: "PersistKit", targets: ["PersistKit"]),
        .executable(name: "persistd", targets: ["persistd"]),
        .executable(name: "persistctl", targets: ["persistctl"]),
        .executable(name: "persistd-bench", targets: ["PersistBench"]),
        .library(name: "PersistCodegen", targets: ["PersistCodegen"]),
        .executable(name: "persist-codegen", targets: ["persist-codegen"]),
        .plugin(name: "PersistKitCodegen", targets: ["PersistKitCodegen"]),
    ],
    targets: [
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .systemLibrary(
            name: "CSystemd",
            pkgConfig: "libsystemd",
            providers: [.apt(["libsystemd-dev"])]
        ),
        // jemalloc, persistd's malloc (docs/daemon.md, "Memory allocator"); linked into persistd only.
        .systemLibrary(
            name: "CJemalloc",
            pkgConfig: "jemalloc",
            providers: [.apt(["libjemalloc-dev"])]
        ),
        // epoll and eventfd (glibc headers the Glibc module leaves out), for persistd's event loops.
        .systemLibrary(
            name: "CEpoll"
        ),
        // The VFS that writes a commit's WAL frames with one system call (docs/stores.md, "WAL writes").
        .target(
            name: "CWALWriteVFS",
            dependencies: ["CSQLite"]
        ),
        .target(
            name: "PersistKit",
            dependencies: ["CSQLite", "CWALWriteVFS"]
        ),
        // Test support only (docs/RELIABILITY.md): a SQLite VFS that fails chosen writes and
        // syncs and simulates power loss. Never linked into persistd or persistctl.
        .target(
            name: "CFaultVFS",
            dependencies: ["CSQLite"]
        ),
        .target(
            name: "PersistServer",
            dependencies: ["PersistKit", "CSystemd", "PersistCodegen", "CEpoll"]
        ),
        .executableTarget(
            name: "persistd",
            dependencies: ["PersistServer", "CJemalloc"]
        ),
        .executableTarget(
            name: "persistctl",
            dependencies: ["PersistServer"]
        ),
        .executableTarget(
            name: "BeerWorkflow",
            dependencies: ["PersistKit"],
            path: "Examples/BeerWorkflow",
            plugins: ["PersistKitCodegen"]
        ),
        .executableTarget(
            name: "PersistBench",
            dependencies: ["PersistKit", "CSQLite"],
            path: "Benchmarks/PersistBench",
            // The Item class of Bench.model.json, read through its generated properties in workload 2.
            plugins: ["PersistKitCodegen"]
        ),
        .executableTarget(
            name: "PersistStress",
            dependencies: ["PersistKit"],
            path: "Tests/Support/PersistStress"
        ),
        .testTarget(
            name: "PersistKitTests",
            dependencies: ["PersistKit", "CFaultVFS", "PredicateDifferential"],
            exclude: ["Fixtures"]
        ),
        .testTarget(
            name: "PersistServerTests",
            dependencies: ["PersistServer", "PersistKit", "CFaultVFS"]
        ),
        // Code generation (docs/codegen.md): the generator, its tool, the build plugin, an example.
        .target(
            name: "PersistCodegen",
            dependencies: ["PersistKit"]
        ),
        .executableTarget(
            name: "persist-codegen",
            dependencies: ["PersistCodegen"]
        ),
        .plugin(
            name: "PersistKitCodegen",
            capability: .buildTool(),
            dependencies: ["persist-codegen"]
        ),
        .executableTarget(
            name: "CodegenExample",
            dependencies: ["PersistKit"],
            path: "Examples/CodegenExample",
            plugins: ["PersistKitCodegen"]
        ),
        .testTarget(
            name: "PersistCodegenTests",
            dependencies: ["PersistCodegen", "PersistKit"],
            plugins: ["PersistKitCodegen"]
        ),
        // The randomized SQL-versus-evaluator predicate test's stores and generator, shared by
        // PersistKitTests and the FuzzPredicateDifferential fuzz target.
        .target(
            name: "PredicateDifferential",
            dependencies: ["PersistKit"],
            path: "Tests/Support/PredicateDifferential"
        ),
        // Fuzz targets (docs/RELIABILITY.md): libFuzzer entry points; `make fuzz` builds them with
        // libFuzzer and AddressSanitizer, a normal build makes each replay its seed corpus
        // (Fuzz/Corpus/<target>/), which `make test` runs.
        .target(
            name: "FuzzSupport",
            path: "Fuzz/Support"
        ),
        .executableTarget(
            name: "FuzzWireRequest",
            dependencies: ["PersistServer", "FuzzSupport"],
            path: "Fuzz/FuzzWireRequest"
        ),
        .executableTarget(
            name: "FuzzPredicateParser",
            dependencies: ["PersistKit", "FuzzSupport"],
            path: "Fuzz/FuzzPredicateParser"
        ),
        .executableTarget(
            name: "FuzzXcodeModel",
            dependencies: ["PersistKit", "FuzzSupport"],
            path: "Fuzz/FuzzXcodeModel"
        ),
        .executableTarget(
            name: "FuzzPredicateDifferential",
            dependencies: ["PersistKit", "PredicateDifferential", "FuzzSupport"],
            path: "Fuzz/FuzzPredicateDifferential"
        ),
    ],
    swiftLanguageModes: [.v6]
)
