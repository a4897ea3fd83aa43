// swift-tools-version:6.0
// Boardwalk: an event-log engine for onboarding analytics.
//
// Layers, each a target, with one-way dependencies:
//
//   BoardwalkModel  (events as values; no Foundation, no LMDB)
//     ├─ BoardwalkJSON       (NDJSON reader on simdjson, canonical writer)
//     ├─ BoardwalkCodec      (compact binary records and batch files)
//     │    └─ BoardwalkStoreFormat (the store's value formats: blocks, session buckets, chunks; no LMDB)
//     │         └─ BoardwalkStore (append-only LMDB store; the only user of CLMDB)
//     │              └─ BoardwalkQuery (the query language)
//     └─ BoardwalkGenerator  (deterministic synthetic data)
//   Boardwalk      (the embeddable library: re-exports the layers above)
//   BoardwalkCLI   (the commands, testable in-process) ← boardwalk (thin main)
import PackageDescription

let package = Package(
    name: "Boardwalk",
    products: [
        .library(name: "Boardwalk", targets: ["Boardwalk"]),
        .executable(name: "boardwalk", targets: ["boardwalk"]),
        .executable(name: "boardwalk-bench", targets: ["BoardwalkBench"]),
    ],
    targets: [
        // MARK: System libraries (Debian -dev packages)
        .systemLibrary(
            name: "CLMDB",
            pkgConfig: "lmdb",
            providers: [.apt(["liblmdb-dev"])]
        ),
        // CRC-32C (crc32_iscsi) for the checksums of batch files and stored blocks.
        .systemLibrary(
            name: "CISAL",
            pkgConfig: "libisal",
            providers: [.apt(["libisal-dev"])]
        ),
        .systemLibrary(
            name: "CEditLine",
            pkgConfig: "libedit",
            providers: [.apt(["libedit-dev"])]
        ),
        // gzip and zstd input for `boardwalk ingest`.
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        .systemLibrary(
            name: "CZstd",
            pkgConfig: "libzstd",
            providers: [.apt(["libzstd-dev"])]
        ),
        .target(
            name: "CSimdjson",
            linkerSettings: [.linkedLibrary("simdjson")]
        ),

        // A software prefetch (a static inline C function; Swift has none of its own).
        .target(name: "CPrefetch"),

        // MARK: Layers
        .target(name: "BoardwalkModel"),
        .target(name: "BoardwalkJSON", dependencies: ["BoardwalkModel", "CSimdjson"]),
        .target(name: "BoardwalkCodec", dependencies: ["BoardwalkModel", "CISAL"]),
        // The store's value formats: package access only, not re-exported by `Boardwalk`; fuzzed without LMDB.
        .target(name: "BoardwalkStoreFormat", dependencies: ["BoardwalkModel", "BoardwalkCodec"]),
        .target(
            name: "BoardwalkStore",
            dependencies: ["BoardwalkModel", "BoardwalkCodec", "BoardwalkStoreFormat", "CLMDB", "CPrefetch"]
        ),
        .target(
            name: "BoardwalkQuery",
            dependencies: ["BoardwalkModel", "BoardwalkJSON", "BoardwalkCodec", "BoardwalkStore"]),
        .target(name: "BoardwalkGenerator", dependencies: ["BoardwalkModel", "BoardwalkJSON"]),
        .target(
            name: "Boardwalk",
            dependencies: [
                "BoardwalkModel", "BoardwalkJSON", "BoardwalkCodec", "BoardwalkStore", "BoardwalkQuery",
            ]
        ),
        .target(
            name: "BoardwalkCLI", dependencies: ["Boardwalk", "BoardwalkGenerator", "CEditLine", "CZlib", "CZstd"]),
        .executableTarget(name: "boardwalk", dependencies: ["BoardwalkCLI"]),

        // MARK: Benchmarks (`swift run -c release boardwalk-bench`; see Benchmarks/README.md)
        .target(name: "CAllocCounter", path: "Benchmarks/CAllocCounter"),
        .systemLibrary(
            name: "CSQLite",
            path: "Benchmarks/CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .executableTarget(
            name: "BoardwalkBench",
            // CLMDB here only for the raw-LMDB peer the store is measured against.
            dependencies: [
                "BoardwalkModel", "BoardwalkGenerator", "BoardwalkJSON", "BoardwalkCodec", "BoardwalkStoreFormat",
                "BoardwalkStore", "BoardwalkCLI", "CAllocCounter", "CSQLite", "CLMDB",
            ],
            path: "Benchmarks/BoardwalkBench"
        ),

        // MARK: Tests
        .testTarget(name: "BoardwalkModelTests", dependencies: ["BoardwalkModel"]),
        .testTarget(
            name: "BoardwalkJSONTests",
            dependencies: ["BoardwalkJSON", "BoardwalkGenerator"],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(name: "BoardwalkCodecTests", dependencies: ["BoardwalkCodec", "BoardwalkGenerator"]),
        .testTarget(name: "BoardwalkStoreFormatTests", dependencies: ["BoardwalkStoreFormat", "BoardwalkGenerator"]),
        .testTarget(
            name: "BoardwalkStoreTests",
            dependencies: ["BoardwalkStore", "BoardwalkStoreFormat", "BoardwalkGenerator", "boardwalk-store-fixture"]
        ),
        // A child process for the store's kill and multi-process tests; built with the tests, never shipped.
        .executableTarget(
            name: "boardwalk-store-fixture", dependencies: ["BoardwalkStore", "BoardwalkModel"],
            path: "Tests/StoreFixture"),
        .testTarget(name: "BoardwalkQueryTests", dependencies: ["BoardwalkQuery", "BoardwalkGenerator"]),
        .testTarget(
            name: "BoardwalkCLITests",
            dependencies: ["BoardwalkCLI", "BoardwalkGenerator", "BoardwalkJSON", "BoardwalkStore"]),
        .testTarget(name: "BoardwalkGeneratorTests", dependencies: ["BoardwalkGenerator", "BoardwalkJSON"]),
    ]
)
