// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "persistd",
    products: [
        .library(name: "PersistKit", targets: ["PersistKit"]),
        .executable(name: "persistd", targets: ["persistd"]),
        .executable(name: "persistctl", targets: ["persistctl"]),
        .executable(name: "persistd-bench", targets: ["PersistBench"]),
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
        .target(
            name: "PersistKit",
            dependencies: ["CSQLite"]
        ),
        .target(
            name: "PersistServer",
            dependencies: ["PersistKit", "CSystemd"]
        ),
        .executableTarget(
            name: "persistd",
            dependencies: ["PersistServer"]
        ),
        .executableTarget(
            name: "persistctl",
            dependencies: ["PersistServer"]
        ),
        .executableTarget(
            name: "BeerWorkflow",
            dependencies: ["PersistKit"],
            path: "Examples/BeerWorkflow"
        ),
        .executableTarget(
            name: "PersistBench",
            dependencies: ["PersistKit", "CSQLite"],
            path: "Benchmarks/PersistBench"
        ),
        .executableTarget(
            name: "PersistStress",
            dependencies: ["PersistKit"],
            path: "Tests/Support/PersistStress"
        ),
        .testTarget(
            name: "PersistKitTests",
            dependencies: ["PersistKit"],
            exclude: ["Fixtures"]
        ),
        .testTarget(
            name: "PersistServerTests",
            dependencies: ["PersistServer", "PersistKit"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
