#if canImport(Glibc)
    import Glibc
#endif

/// The rejects file: one entry per rejected line, `INPUT:LINE: REASON`, then the line itself after a tab
/// (cut at 1 000 bytes). Created (truncated) at the first rejection of a run; not created when nothing is
/// rejected.
final class RejectsWriter {
    let path: String
    private(set) var count = 0
    private var sink: FileSink?
    private var descriptor: Int32 = -1

    /// Where rejected lines go without `--rejects`.
    static let defaultPath = "./boardwalk-rejects.txt"

    init(path: String) { self.path = path }

    /// Fails now, before anything is ingested, when the rejects file could not be written later: its
    /// directory is missing or not writable, or the file exists and is not writable. Nothing is created.
    func checkWritable() throws(RuntimeError) {
        let directory: String
        if let slash = path.lastIndex(of: "/") {
            directory = slash == path.startIndex ? "/" : String(path[..<slash])
        } else {
            directory = "."
        }
        let target = access(path, F_OK) == 0 ? path : directory
        guard access(target, W_OK) == 0 else {
            throw RuntimeError("cannot write the rejects file '\(path)': \(String(cString: strerror(errno)))")
        }
    }

    deinit {
        sink?.flush()
        if descriptor >= 0 { close(descriptor) }
    }

    func reject(input: String, line: Int, reason: String, text: UnsafeRawBufferPointer) throws(RuntimeError) {
        if sink == nil {
            descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard descriptor >= 0 else {
                let hint = path == RejectsWriter.defaultPath ? "; name a writable one with --rejects FILE" : ""
                throw RuntimeError(
                    "cannot write the rejects file '\(path)' for line \(line) of \(input), which was rejected: "
                        + "\(String(cString: strerror(errno)))\(hint)")
            }
            sink = FileSink(descriptor: descriptor, buffered: true)
        }
        count += 1
        sink!.write(
            "\(input):\(line): \(reason)\n\t\(RejectsWriter.shown(text))\(text.count > RejectsWriter.shownBytes ? "…" : "")\n"
        )
        // A full disk: the lines rejected from here on could not be listed, so the run stops, as when the file
        // cannot be made.
        if let code = sink!.writeError {
            throw RuntimeError(
                "cannot write the rejects file '\(path)' for line \(line) of \(input), which was rejected: "
                    + String(cString: strerror(code)))
        }
    }

    /// The `errno` of the rejects file's first failed write, if any (see ``OutputSink/writeError``).
    var writeError: Int32? { sink?.writeError }

    /// How much of a rejected line the file shows.
    static let shownBytes = 1000

    /// A rejected line as the rejects file shows it: its first 1 000 bytes, invalid UTF-8 repaired and C0 controls
    /// and DEL as U+FFFD, so that the entry stays on its line and prints safely.
    ///
    /// Replaced byte by byte before decoding: those bytes are ASCII, never part of a multi-byte sequence, so this is
    /// the same text as decoding first and replacing scalars after, without a `Character` per byte (a file of bad
    /// lines spent 70 % of its run building them).
    /// - Complexity: O(min(n, 1 000)).
    static func shown(_ text: UnsafeRawBufferPointer) -> String {
        let cut = text.prefix(shownBytes)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(cut.count + 32)
        for byte in cut {
            if byte < 0x20 || byte == 0x7F {
                bytes.append(contentsOf: [0xEF, 0xBF, 0xBD])
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    func flush() { sink?.flush() }
}
