#if canImport(Glibc)
import Glibc
#endif

/// An input being ingested: a file, or standard input (`-`), read in large blocks.
///
/// Reading is by `read(2)` on the descriptor, so a pipe that delivers lines slowly (`tail -f app.log |
/// boardwalk ingest -`) gives them to the caller as they arrive; ``waitForInput(milliseconds:)`` tells the
/// caller when nothing is coming for a while, so it can commit what it holds instead of waiting for more.
final class InputFile {
    /// The name used in messages and in the rejects file (`-` is `<stdin>`).
    let name: String
    /// The descriptor; closed on deinit unless it is standard input.
    let descriptor: Int32
    /// The size in bytes for a regular file (for percent and ETA), else `nil`.
    let size: Int?
    /// Device and inode of a regular file, for the checkpoint key.
    let identity: (device: UInt64, inode: UInt64)?
    /// Bytes read so far (from the start of the file, including any skipped prefix).
    private(set) var offset: Int = 0

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
        if fstat(descriptor, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG {
            size = Int(st.st_size)
            identity = (UInt64(st.st_dev), UInt64(st.st_ino))
        } else {
            size = nil
            identity = nil
        }
    }

    deinit { if descriptor != 0 { close(descriptor) } }

    var isRegularFile: Bool { size != nil }

    /// Moves to byte `position` of a regular file (to resume after a checkpoint).
    func seek(to position: Int) throws(RuntimeError) {
        guard lseek(descriptor, off_t(position), SEEK_SET) >= 0 else {
            throw RuntimeError("cannot seek in '\(name)': \(String(cString: strerror(errno)))")
        }
        offset = position
    }

    /// Reads up to `buffer.count` bytes into `buffer`; 0 at the end of the input.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(RuntimeError) -> Int {
        while true {
            let n = Glibc.read(descriptor, buffer.baseAddress, buffer.count)
            if n >= 0 {
                offset += n
                return n
            }
            if errno == EINTR { continue }
            throw RuntimeError("cannot read '\(name)': \(String(cString: strerror(errno)))")
        }
    }

    /// Whether bytes arrive within `milliseconds` (always `true` for regular files).
    func waitForInput(milliseconds: Int32) -> Bool {
        if isRegularFile { return true }
        var p = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let r = poll(&p, 1, milliseconds)
        return r != 0
    }

    /// Reads the first `count` bytes of a regular file without moving the read position (for the
    /// checkpoint's fingerprint).
    func prefix(_ count: Int) -> [UInt8] {
        guard isRegularFile, count > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: count)
        let n = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, count, 0) }
        return n > 0 ? Array(bytes.prefix(n)) : []
    }
}
