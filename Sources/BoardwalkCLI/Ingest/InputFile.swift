import BoardwalkJSON

#if canImport(Glibc)
    import Glibc
#endif

/// An input being ingested: a file, or standard input (`-`), read in large blocks.
///
/// Reading is by `read(2)` on the descriptor, so a pipe that delivers lines slowly (`tail -f app.log |
/// boardwalk ingest -`) gives them to the caller as they arrive; ``waitForInput(milliseconds:)`` tells the
/// caller when nothing is coming for a while, so it can commit what it holds instead of waiting for more.
///
/// An input that starts with gzip's or zstd's magic bytes (a `.gz` or `.zst` file, or such bytes on standard input)
/// is decompressed as it is read (``Compression``): ``read(into:)`` hands out its bytes. It is read as a stream, like
/// standard input: it has no checkpoint (a position in the decompressed bytes cannot be sought).
final class InputFile {
    /// The name used in messages and in the rejects file (`-` is `<stdin>`).
    let name: String
    /// The descriptor; closed on deinit unless it is standard input.
    let descriptor: Int32
    /// The size in bytes for a regular file, standard input included (for percent and ETA), else `nil`.
    let size: Int?
    /// Device and inode of a regular file named by its path, for the checkpoint key (`nil` for standard input).
    let identity: (device: UInt64, inode: UInt64)?
    /// Bytes read so far (from the start of the file, including any skipped prefix); of a compressed input, the
    /// bytes it decompressed to.
    private(set) var offset: Int = 0
    /// Bytes of the file itself read so far: ``offset``, except for a compressed input (for progress against
    /// ``size``).
    var fileOffset: Int { decompressor == nil ? offset : rawConsumed }
    /// The compression of the input, once known: for a file at ``init(path:)``, for standard input at the first
    /// read.
    private(set) var compression: Compression?
    private var decompressor: (any Decompressor)?
    /// Whether the first bytes of a stream have been looked at for a magic.
    private var sniffed = false
    /// Bytes read from the descriptor and not handed out yet: compressed bytes, or a stream's first bytes that were
    /// read to look for a magic.
    private var raw: UnsafeMutableRawBufferPointer? = nil
    private var rawStart = 0
    private var rawEnd = 0
    private var rawEOF = false
    private var rawConsumed = 0
    /// Asked when a read is interrupted by a signal: `true` ends the input there (Ctrl-C while a pipe is
    /// quiet), `false` retries.
    var interrupted: () -> Bool = { false }

    init(path: String) throws(RuntimeError) {
        if path == "-" {
            name = "<stdin>"
            descriptor = 0
        } else {
            name = path
            descriptor = open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else {
                throw RuntimeError("cannot open '\(path)': \(String(cString: strerror(errno)))")
            }
        }
        var st = stat()
        let described = fstat(descriptor, &st) == 0
        if described, (st.st_mode & S_IFMT) == S_IFDIR {
            // Refused here, with a missing file, before the store is opened; read(2) would fail with EISDIR
            // only once the run had begun.
            if descriptor != 0 { close(descriptor) }
            throw RuntimeError("cannot read '\(path == "-" ? "<stdin>" : path)': it is a directory")
        }
        if described, (st.st_mode & S_IFMT) == S_IFREG {
            size = Int(st.st_size)
            // Standard input has no checkpoint, even when the shell connects it to a file (`ingest - < file`):
            // what it read is not known to be the file from its start, and the documentation promises none.
            isRegularFile = path != "-"
            identity = path == "-" ? nil : (UInt64(st.st_dev), UInt64(st.st_ino))
        } else {
            size = nil
            isRegularFile = false
            identity = nil
        }
        // A UTF-16 or UTF-32 file (Windows tools write UTF-16 with `>` and `Out-File`) is refused whole, before anything is stored,
        // rather than each of its lines rejected (exit 2, a rejects file of garbled lines); its last "line", a lone
        // zero byte after the final newline, would also be taken for a line a writer is still finishing.
        // Standard input cannot be looked at ahead: there the reader rejects each line as UTF-16.
        let head = isRegularFile ? prefix(16) : []
        if let compression = Compression.detect(head) {
            // Decompressed as a stream: no checkpoint, nothing read twice.
            self.compression = compression
            decompressor = try compression.decompressor(input: name)
            isRegularFile = false
            sniffed = true
            return
        }
        // iconv reads a file without a byte-order mark as big-endian: the name says the order the zero bytes show.
        if let encoding = head.withUnsafeBytes({ wideTextEncoding($0) }) {
            close(descriptor)
            throw RuntimeError(
                "cannot read '\(path)': it is \(encoding) text; ingest reads UTF-8 NDJSON: convert it first "
                    + "(iconv -f \(encoding) -t UTF-8 '\(path)' > '\(path).utf8')")
        }
    }

    deinit {
        if descriptor != 0 { close(descriptor) }
        raw?.deallocate()
    }

    /// Whether the input is a regular file named on the command line, not compressed: it can be re-read
    /// (fingerprints, batch-file detection at its start), it has a checkpoint, and its end is where a writer may still
    /// be. Standard input is read as a stream even when it is a file (its size still drives the progress line), and so
    /// is a compressed file.
    private(set) var isRegularFile: Bool

    /// Moves to byte `position` of a regular file (to resume after a checkpoint).
    func seek(to position: Int) throws(RuntimeError) {
        guard lseek(descriptor, off_t(position), SEEK_SET) >= 0 else {
            throw RuntimeError("cannot seek in '\(name)': \(String(cString: strerror(errno)))")
        }
        offset = position
    }

    /// Reads up to `buffer.count` bytes into `buffer`; 0 at the end of the input, or when ``interrupted``
    /// says to stop. A compressed input gives its decompressed bytes.
    ///
    /// A pipe or terminal is polled before each read, a fifth of a second at a time, so a quiet `tail -f`
    /// never blocks the process where Ctrl-C cannot reach it: the signal handler only sets a flag, and the
    /// flag is looked at between polls.
    /// - Throws: ``RuntimeError`` when the input cannot be read, or its compressed data is not valid.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(RuntimeError) -> Int {
        if !sniffed { try sniff() }
        if let decompressor {
            while true {
                // What the decompressor holds or can make of the bytes read so far (it may hold output that did not
                // fit the last buffer), before anything more is read.
                let (consumed, produced) = try decompressor.decompress(
                    UnsafeRawBufferPointer(rebasing: rawBuffer()[rawStart..<rawEnd]), into: buffer)
                rawStart += consumed
                rawConsumed += consumed
                if produced > 0 {
                    offset += produced
                    return produced
                }
                if rawStart < rawEnd {
                    if consumed == 0 {
                        throw RuntimeError("cannot read '\(name)': its \(compression!.name) data is stuck")
                    }
                    continue
                }
                if rawEOF {
                    try decompressor.finish()
                    return 0
                }
                let n = try readDescriptor(into: rawBuffer())
                rawStart = 0
                rawEnd = n
                if n == 0 {
                    // The end, or Ctrl-C while a pipe is quiet: what was decompressed so far is all there is.
                    rawEOF = true
                    if interrupted() { return 0 }
                }
            }
        }
        // The end met while looking for a magic: a terminal's Ctrl-D is not sticky, another read would wait for more.
        if rawEOF && rawStart == rawEnd { return 0 }
        if rawStart < rawEnd {
            // A stream's first bytes, read to look for a magic.
            let n = min(buffer.count, rawEnd - rawStart)
            buffer.baseAddress!.copyMemory(from: rawBuffer().baseAddress! + rawStart, byteCount: n)
            rawStart += n
            offset += n
            return n
        }
        let n = try readDescriptor(into: buffer)
        offset += n
        return n
    }

    /// The buffer for compressed bytes and a stream's first bytes (256 KiB), made at first use.
    private func rawBuffer() -> UnsafeMutableRawBufferPointer {
        if let raw { return raw }
        let made = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 18, alignment: 16)
        raw = made
        return made
    }

    /// Reads a stream's first bytes until they show a compression's magic or cannot start one (a line of JSON shows
    /// that at its first byte), and sets up the decompressor when they show one.
    private func sniff() throws(RuntimeError) {
        sniffed = true
        let raw = rawBuffer()
        while rawEnd < Compression.magicLength {
            let head = UnsafeRawBufferPointer(rebasing: raw[0..<rawEnd])
            if rawEnd > 0, !Compression.couldStart(head) { break }
            let n = try readDescriptor(into: UnsafeMutableRawBufferPointer(rebasing: raw[rawEnd..<raw.count]))
            if n == 0 {
                rawEOF = true
                break
            }
            rawEnd += n
        }
        if let compression = Compression.detect(UnsafeRawBufferPointer(rebasing: raw[0..<rawEnd])) {
            self.compression = compression
            decompressor = try compression.decompressor(input: name)
        }
    }

    /// `read(2)` on the descriptor, polling a pipe first (see ``read(into:)``).
    private func readDescriptor(into buffer: UnsafeMutableRawBufferPointer) throws(RuntimeError) -> Int {
        while true {
            if !isRegularFile {
                var p = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                let ready = poll(&p, 1, 200)
                if ready <= 0 {
                    if ready < 0, errno != EINTR {
                        throw RuntimeError("cannot read '\(name)': \(String(cString: strerror(errno)))")
                    }
                    if interrupted() { return 0 }
                    continue
                }
            }
            let n = Glibc.read(descriptor, buffer.baseAddress, buffer.count)
            if n >= 0 { return n }
            if errno == EINTR {
                if interrupted() { return 0 }
                continue
            }
            throw RuntimeError("cannot read '\(name)': \(String(cString: strerror(errno)))")
        }
    }

    /// Whether bytes arrive within `milliseconds` (always `true` for regular files, and while bytes read from the
    /// descriptor wait to be handed out).
    func waitForInput(milliseconds: Int32) -> Bool {
        if isRegularFile || rawStart < rawEnd || (decompressor != nil && rawEOF) { return true }
        var p = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let r = poll(&p, 1, milliseconds)
        return r != 0
    }

    /// The first `count` bytes of a regular file, without moving the read position (to check a stored
    /// checkpoint, and a batch file's magic bytes); fewer when the file is shorter.
    func prefix(_ count: Int) -> [UInt8] { bytes(in: 0..<max(0, count)) }

    /// The bytes of `range` of a regular file, without moving the read position (`pread`); fewer when the
    /// file ends inside it, none for other inputs.
    func bytes(in range: Range<Int>) -> [UInt8] {
        guard isRegularFile, range.lowerBound >= 0, !range.isEmpty else { return [] }
        var bytes = [UInt8](repeating: 0, count: range.count)
        var got = 0
        while got < range.count {
            let n = bytes.withUnsafeMutableBytes {
                pread(descriptor, $0.baseAddress! + got, range.count - got, off_t(range.lowerBound + got))
            }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { break }
            got += n
        }
        return Array(bytes.prefix(got))
    }
}
