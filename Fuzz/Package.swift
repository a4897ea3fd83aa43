// swift-tools-version:5.3
// libFuzzer targets for BoardwalkCodec and the JSON reader. A separate package because SwiftPM with
// tools-version 6 fails to link a fuzzer executable on Linux (see docs/codec.md). The codec, JSON, simdjson
// shim and model sources are the main package's, reached through symlinks in Sources/. Build and run with
// ../scripts/fuzz.sh.
import PackageDescription

// The shared sources use `package` access, which needs a package name: tools-version 5.3 passes none, and 5.9,
// which does, fails to link the fuzzers.
let packageName: [SwiftSetting] = [.unsafeFlags(["-package-name", "Boardwalk"])]

let package = Package(
    name: "BoardwalkFuzz",
    targets: [
        .target(name: "BoardwalkModel", swiftSettings: packageName),
        .target(name: "BoardwalkCodec", dependencies: ["BoardwalkModel"], swiftSettings: packageName),
        .target(name: "CSimdjson", cxxSettings: [.unsafeFlags(["-O3"])], linkerSettings: [.linkedLibrary("simdjson")]),
        // -enable-testing: FuzzJSON turns the fast path off on one reader (an internal switch) through
        // `@testable import`, as the tests do.
        .target(name: "BoardwalkJSON", dependencies: ["BoardwalkModel", "CSimdjson"],
                swiftSettings: [.unsafeFlags(["-enable-testing", "-package-name", "Boardwalk"])]),
        .target(name: "FuzzSupport", dependencies: ["BoardwalkCodec", "BoardwalkModel"], swiftSettings: packageName),
        // Each has a main.swift holding only LLVMFuzzerTestOneInput; libFuzzer supplies main().
        .target(name: "FuzzRecord", dependencies: ["FuzzSupport", "BoardwalkCodec", "BoardwalkModel"],
                swiftSettings: packageName),
        .target(name: "FuzzBatch", dependencies: ["FuzzSupport", "BoardwalkCodec", "BoardwalkModel"],
                swiftSettings: packageName),
        .target(name: "FuzzBlock", dependencies: ["FuzzSupport", "BoardwalkCodec", "BoardwalkModel"],
                swiftSettings: packageName),
        .target(name: "FuzzJSON", dependencies: ["BoardwalkJSON", "BoardwalkModel"], swiftSettings: packageName),
    ]
)
