import Foundation
import Testing

/// The result of running the built `boardwalk` executable.
struct Execution {
    var stdout: String
    var stderr: String
    var status: Int32
    /// The signal that ended the process, when one did (a crash: SIGSEGV, SIGABRT, SIGBUS, …).
    var signal: Int32? = nil
}

/// The `boardwalk` executable in the build products directory next to the test bundle.
let boardwalkExecutable: URL = {
    let me = URL(
        fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments[0])
    var directory = me.deletingLastPathComponent()
    // On Linux the test runner is `<products>/BoardwalkPackageTests.xctest`; elsewhere it may be inside a bundle.
    while !FileManager.default.isExecutableFile(atPath: directory.appendingPathComponent("boardwalk").path),
        directory.path != "/"
    {
        directory = directory.deletingLastPathComponent()
    }
    return directory.appendingPathComponent("boardwalk")
}()

/// Runs `boardwalk` with `arguments`, feeding `stdin`, in `environment` (plus PATH), and waits for it.
func boardwalk(_ arguments: [String], stdin: String? = nil, environment: [String: String] = [:], directory: URL? = nil)
    throws -> Execution
{
    try run(tool: boardwalkExecutable.path, arguments, stdin: stdin, environment: environment, directory: directory)
}

/// Runs `boardwalk` with `arguments`, feeding the bytes `stdinData` (binary input), and waits for it.
func boardwalk(_ arguments: [String], stdinData: Data, environment: [String: String] = [:]) throws -> Execution {
    try run(tool: boardwalkExecutable.path, arguments, stdinData: stdinData, environment: environment)
}

/// Runs the executable at `tool` with `arguments`, feeding `stdin`, in `environment` (plus PATH), and waits for it.
func run(
    tool: String, _ arguments: [String], stdin: String? = nil, stdinData: Data? = nil,
    environment: [String: String] = [:], directory: URL? = nil
) throws -> Execution {
    let stdinData = stdinData ?? stdin.map { Data($0.utf8) }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: tool)
    process.arguments = arguments
    var env = ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"]
    env.merge(environment) { $1 }
    process.environment = env
    if let directory { process.currentDirectoryURL = directory }
    let out = Pipe(), err = Pipe(), input = Pipe()
    process.standardOutput = out
    process.standardError = err
    process.standardInput = input
    try process.run()
    // Read both pipes concurrently so a full pipe never blocks the child.
    nonisolated(unsafe) var errData = Data()
    let group = DispatchGroup()
    group.enter()
    DispatchQueue.global().async {
        errData = err.fileHandleForReading.readDataToEndOfFile()
        group.leave()
    }
    if let stdinData {
        _ = ignoringBrokenPipes
        DispatchQueue.global().async {
            // A child that exits before reading its input (a store refused at open) closes the pipe: the write then
            // fails with EPIPE, which must not end the test runner by SIGPIPE.
            try? input.fileHandleForWriting.write(contentsOf: stdinData)
            try? input.fileHandleForWriting.close()
        }
    } else {
        try input.fileHandleForWriting.close()
    }
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    group.wait()
    process.waitUntilExit()
    return Execution(
        stdout: String(decoding: outData, as: UTF8.self), stderr: String(decoding: errData, as: UTF8.self),
        status: process.terminationStatus,
        signal: process.terminationReason == .uncaughtSignal ? process.terminationStatus : nil)
}

/// Ignores SIGPIPE in the test runner, once: a write to a child that has exited fails with EPIPE instead.
private let ignoringBrokenPipes: Void = { signal(SIGPIPE, SIG_IGN) }()

/// A fresh temporary directory for one test, removed by the caller with `defer`.
func temporaryDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("boardwalk-cli-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}
