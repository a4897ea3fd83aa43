// swift-tools-version:5.3
// libFuzzer targets for BoardwalkCodec, the store's value formats and the JSON reader. A separate package because
// SwiftPM fails to link a fuzzer executable on Linux from tools-version 5.5 on (it renames an executable's `main`,
// which a `-parse-as-library` fuzz target does not define; tried up to 5.10). The codec, store format, JSON,
// simdjson and ISA-L shims and model sources are the main package's, reached through symlinks in Sources/.
// Tools-version 5.3 passes no package name to the compiler, so every Swift target gets one here: the store formats use `package`
// access across targets. Build and run with ../scripts/fuzz.sh.
import PackageDescription

/// `package` declarations are visible across the targets that share this name.
let packageName = ["-package-name", "BoardwalkFuzz"]
let swift: [SwiftSetting] = [.unsafeFlags(packageName)]

let package = Package(
    name: "BoardwalkFuzz",
    targets: [
        .target(name: "BoardwalkModel", swiftSettings: swift),
        .systemLibrary(name: "CISAL", pkgConfig: "libisal"),
        .target(name: "BoardwalkCodec", dependencies: ["BoardwalkModel", "CISAL"], swiftSettings: swift),
        .target(
            name: "BoardwalkStoreFormat", dependencies: ["BoardwalkModel", "BoardwalkCodec"], swiftSettings: swift),
        .target(name: "CSimdjson", cxxSettings: [.unsafeFlags(["-O3"])], linkerSettings: [.linkedLibrary("simdjson")]),
        // -enable-testing: FuzzJSON turns the fast path off on one reader (an internal switch) through
        // `@testable import`, as the tests do.
        .target(
            name: "BoardwalkJSON", dependencies: ["BoardwalkModel", "CSimdjson"],
            swiftSettings: [.unsafeFlags(packageName + ["-enable-testing"])]),
        .target(name: "FuzzSupport", dependencies: ["BoardwalkCodec", "BoardwalkModel"], swiftSettings: swift),
        // Each has a main.swift holding only LLVMFuzzerTestOneInput; libFuzzer supplies main().
        .target(
            name: "FuzzRecord", dependencies: ["FuzzSupport", "BoardwalkCodec", "BoardwalkModel"],
            swiftSettings: swift),
        .target(
            name: "FuzzBatch", dependencies: ["FuzzSupport", "BoardwalkCodec", "BoardwalkModel"],
            swiftSettings: swift),
        .target(
            name: "FuzzBlock",
            dependencies: ["FuzzSupport", "BoardwalkCodec", "BoardwalkStoreFormat", "BoardwalkModel"],
            swiftSettings: swift),
        .target(name: "FuzzJSON", dependencies: ["BoardwalkJSON", "BoardwalkModel"], swiftSettings: swift),
    ]
)
