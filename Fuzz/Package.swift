// swift-tools-version:5.3
// libFuzzer targets for BoardwalkCodec and the JSON reader. A separate package because SwiftPM with
// tools-version 6 fails to link a fuzzer executable on Linux (see docs/codec.md). The codec, JSON, simdjson
// shim and model sources are the main package's, reached through symlinks in Sources/. Build and run with
// ../scripts/fuzz.sh.
import PackageDescription

let package = Package(
    name: "BoardwalkFuzz",
    targets: [
        .target(name: "BoardwalkModel"),
        .target(name: "BoardwalkCodec", dependencies: ["BoardwalkModel"]),
        .target(name: "CSimdjson", cxxSettings: [.unsafeFlags(["-O3"])], linkerSettings: [.linkedLibrary("simdjson")]),
        // -enable-testing: FuzzJSON turns the fast path off on one reader (an internal switch) through
        // `@testable import`, as the tests do.
        .target(name: "BoardwalkJSON", dependencies: ["BoardwalkModel", "CSimdjson"],
                swiftSettings: [.unsafeFlags(["-enable-testing"])]),
        .target(name: "FuzzSupport", dependencies: ["BoardwalkCodec", "BoardwalkModel"]),
        // Each has a main.swift holding only LLVMFuzzerTestOneInput; libFuzzer supplies main().
        .target(name: "FuzzRecord", dependencies: ["FuzzSupport", "BoardwalkCodec", "BoardwalkModel"]),
        .target(name: "FuzzBatch", dependencies: ["FuzzSupport", "BoardwalkCodec", "BoardwalkModel"]),
        .target(name: "FuzzBlock", dependencies: ["FuzzSupport", "BoardwalkCodec", "BoardwalkModel"]),
        .target(name: "FuzzJSON", dependencies: ["BoardwalkJSON", "BoardwalkModel"]),
    ]
)
