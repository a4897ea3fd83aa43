#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Somewhere text goes: the process's stdout or stderr, or a buffer in tests.
package protocol OutputSink: AnyObject {
    func write(_ text: String)
    /// Writes raw bytes (binary output, such as a batch file).
    func write(bytes: [UInt8])
    func flush()
    /// The `errno` of the first write that failed (`ENOSPC`, `EPIPE` when the reader is gone and SIGPIPE is
    /// ignored, `EIO`), after which nothing more is written; `nil` while every write succeeded. Commands that write
    /// a lot stop when it is set, and no command reports success over output that was lost.
    var writeError: Int32? { get }
}

extension OutputSink {
    /// Sinks that cannot fail (a buffer in memory) never have an error.
    package var writeError: Int32? { nil }
}

/// A file descriptor (1, 2), written with `write(2)` through a buffer of its own.
package final class FileSink: OutputSink {
    private let descriptor: Int32
    private let buffered: Bool
    private var buffer: [UInt8] = []
    package private(set) var writeError: Int32?
    /// Called once, with the `errno`, when a write first fails (the process's stdout says so on stderr).
    private let onFailure: ((Int32) -> Void)?

    /// - Parameters:
    ///   - buffered: keep up to 64 KiB before writing (stdout); otherwise write at once (stderr).
    ///   - onFailure: called once when a write first fails, with its `errno`.
    package init(descriptor: Int32, buffered: Bool, onFailure: ((Int32) -> Void)? = nil) {
        self.descriptor = descriptor
        self.buffered = buffered
        self.onFailure = onFailure
        if buffered { buffer.reserveCapacity(1 << 16) }
    }

    deinit { flush() }

    package func write(_ text: String) {
        var text = text
        text.withUTF8 { append(UnsafeRawBufferPointer($0)) }
    }

    package func write(bytes: [UInt8]) {
        bytes.withUnsafeBytes { append($0) }
    }

    private func append(_ bytes: UnsafeRawBufferPointer) {
        guard writeError == nil else { return }
        if buffered, buffer.count + bytes.count <= 1 << 16 {
            buffer.append(contentsOf: bytes)
        } else {
            flush()
            writeAll(bytes)
        }
    }

    package func flush() {
        guard !buffer.isEmpty, writeError == nil else { return }
        buffer.withUnsafeBytes { writeAll($0) }
        buffer.removeAll(keepingCapacity: true)
    }

    private func writeAll(_ bytes: UnsafeRawBufferPointer) {
        guard writeError == nil else { return }
        var offset = 0
        while offset < bytes.count {
            let n = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                // ENOSPC, EPIPE (SIGPIPE ignored), EIO: what follows would be lost too; remembered, so that the
                // command stops and does not report success.
                writeError = errno
                onFailure?(errno)
                return
            }
            offset += n
        }
    }
}

/// Collects text, for in-process tests.
package final class BufferSink: OutputSink {
    /// Everything written so far.
    package private(set) var text = ""
    package init() {}
    package func write(_ text: String) { self.text += text }
    /// Kept as text with invalid UTF-8 repaired: tests of binary output should use a file.
    package func write(bytes: [UInt8]) { self.text += String(decoding: bytes, as: UTF8.self) }
    package func flush() {}
}

/// Which of the two output streams.
package enum OutputStream: String, Hashable, Sendable {
    case stdout, stderr
}

/// Everything a command may know about the process it runs in: environment, streams, terminals. Commands
/// take it as a parameter (no globals), so they run the same in-process under tests.
package struct Invocation {
    /// The environment variables.
    package var environment: [String: String]
    /// Where results go.
    package var stdout: OutputSink
    /// Where diagnostics, progress and errors go.
    package var stderr: OutputSink
    /// Whether standard input is a terminal (the REPL then edits lines; otherwise it reads a pipe).
    package var stdinIsTerminal: Bool
    /// Whether standard output is a terminal (colour, binary-output refusal).
    package var stdoutIsTerminal: Bool
    /// Whether standard error is a terminal (progress line, colour).
    package var stderrIsTerminal: Bool
    /// Terminal width in columns (80 when unknown).
    package var columns: Int

    package init(
        environment: [String: String], stdout: OutputSink, stderr: OutputSink, stdinIsTerminal: Bool = false,
        stdoutIsTerminal: Bool = false, stderrIsTerminal: Bool = false, columns: Int = 80
    ) {
        self.environment = environment
        self.stdout = stdout
        self.stderr = stderr
        self.stdinIsTerminal = stdinIsTerminal
        self.stdoutIsTerminal = stdoutIsTerminal
        self.stderrIsTerminal = stderrIsTerminal
        self.columns = columns
    }

    /// The real process: its environment, `stdout`/`stderr`, and `isatty` on each descriptor.
    package static func process() -> Invocation {
        var env: [String: String] = [:]
        var p = environ
        while let entry = p.pointee {
            let s = String(cString: entry)
            if let eq = s.firstIndex(of: "=") { env[String(s[..<eq])] = String(s[s.index(after: eq)...]) }
            p += 1
        }
        var size = winsize()
        let columns = ioctl(1, UInt(TIOCGWINSZ), &size) == 0 && size.ws_col > 0 ? Int(size.ws_col) : 80
        return Invocation(
            environment: env,
            stdout: FileSink(
                descriptor: 1, buffered: true,
                onFailure: { code in
                    let message = "Error: cannot write to standard output: \(String(cString: strerror(code)))\n"
                    _ = message.withCString { Glibc.write(2, $0, strlen($0)) }
                }),
            stderr: FileSink(descriptor: 2, buffered: false), stdinIsTerminal: isatty(0) == 1,
            stdoutIsTerminal: isatty(1) == 1, stderrIsTerminal: isatty(2) == 1, columns: columns)
    }

    /// Colour is used on a terminal only, and never when `NO_COLOR` is set to anything non-empty
    /// (https://no-color.org).
    package func colour(for stream: OutputStream) -> Bool {
        if let v = environment["NO_COLOR"], !v.isEmpty { return false }
        return stream == .stdout ? stdoutIsTerminal : stderrIsTerminal
    }

    /// The store directory: `--db DIR`, else `$BOARDWALK_DB`, else `./boardwalk.db`.
    package func database(_ arguments: ParsedArguments) -> String {
        if let db = arguments.value("db") { return db }
        if let env = environment["BOARDWALK_DB"], !env.isEmpty { return env }
        return "./boardwalk.db"
    }

    func out(_ text: String) { stdout.write(text) }
    func err(_ text: String) { stderr.write(text) }
}
