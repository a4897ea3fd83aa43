import Boardwalk

#if canImport(Glibc)
    import Glibc
#endif

/// The pager that long results go through in the REPL on a terminal: `$PAGER`, else `less -FRX` when `less` is on the
/// `PATH`; none when `PAGER` is set to the empty string, or when standard output is not a terminal.
struct Pager {
    /// The command, run by `/bin/sh -c` with the result on its standard input.
    var command: String

    /// The pager for an environment; `nil` when there is none.
    static func from(environment: [String: String]) -> Pager? {
        if let command = environment["PAGER"] {
            return command.trimmingSpaces().isEmpty ? nil : Pager(command: command)
        }
        let path = environment["PATH"] ?? "/usr/bin:/bin"
        let found = path.split(separator: ":").contains { access("\($0)/less", X_OK) == 0 }
        return found ? Pager(command: "less -FRX") : nil
    }

    /// The terminal's height in lines (standard output's), or `nil` when it is not a terminal.
    static func terminalRows() -> Int? {
        var size = winsize()
        guard isatty(1) == 1, ioctl(1, UInt(TIOCGWINSZ), &size) == 0, size.ws_row > 0 else { return nil }
        return Int(size.ws_row)
    }

    /// The pager, started, when `lines` of output would not fit the terminal; `nil` to print directly.
    func open(forLines lines: Int) -> Paged? {
        guard let rows = Pager.terminalRows(), lines >= rows else { return nil }
        return Paged(command: command)
    }
}

/// A running pager: what is written to ``sink`` goes to its standard input; ``close()`` waits for it to exit.
final class Paged {
    let sink: PipeSink
    private let file: UnsafeMutablePointer<FILE>
    /// SIGPIPE as it was: ignored while the pager runs, since the user may quit it before the result is written.
    private var previous = sigaction()

    init?(command: String) {
        var ignore = sigaction()
        // SIG_IGN is the handler 1 (<signal.h>), which Swift does not import.
        ignore.__sigaction_handler.sa_handler = unsafeBitCast(Int(1), to: __sighandler_t.self)
        sigemptyset(&ignore.sa_mask)
        sigaction(SIGPIPE, &ignore, &previous)
        fflush(nil)  // C stdio, should anything have used it; the sinks are flushed by their owner
        guard let file = popen(command, "w") else {
            sigaction(SIGPIPE, &previous, nil)
            return nil
        }
        self.file = file
        sink = PipeSink(file)
    }

    func close() {
        sink.flush()
        pclose(file)
        sigaction(SIGPIPE, &previous, nil)
    }
}

/// Text written to a `FILE *` (a pager's pipe); after a failed write (the pager quit), nothing more is written.
final class PipeSink: OutputSink {
    private let file: UnsafeMutablePointer<FILE>
    private(set) var writeError: Int32?

    init(_ file: UnsafeMutablePointer<FILE>) { self.file = file }

    func write(_ text: String) {
        var text = text
        text.withUTF8 { write(UnsafeRawBufferPointer($0)) }
    }

    func write(bytes: [UInt8]) { bytes.withUnsafeBytes { write($0) } }

    private func write(_ bytes: UnsafeRawBufferPointer) {
        guard writeError == nil, !bytes.isEmpty else { return }
        if fwrite(bytes.baseAddress, 1, bytes.count, file) != bytes.count { writeError = errno }
    }

    func flush() {
        if writeError == nil, fflush(file) != 0 { writeError = errno }
    }
}
