#if canImport(Glibc)
    import Glibc
#endif

/// Checks that keep a command's own output from overwriting its inputs or the store it reads.
enum FileSafety {
    /// The device and inode of `path`, or `nil` when it does not exist.
    static func identity(_ path: String) -> (device: UInt64, inode: UInt64)? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        return (UInt64(st.st_dev), UInt64(st.st_ino))
    }

    /// Whether `path` names an existing directory.
    static func isDirectory(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
    }

    /// Whether `path` is one of the LMDB files of the store directory `store` (`data.mdb`, `lock.mdb`), under any
    /// name: writing there would destroy the store.
    static func isStoreFile(_ path: String, store: String) -> Bool {
        guard let target = identity(path) else { return false }
        return ["data.mdb", "lock.mdb"].contains { name in
            identity(store + "/" + name).map { $0 == target } ?? false
        }
    }
}

/// An export's `--output` file, written beside its destination and moved over it only once the export is whole: a
/// failed export (a damaged store, a full disk) leaves the file that was there as it was, instead of a truncated one.
/// A destination that is not a regular file (`/dev/stdout`, a pipe) is written in place.
final class ReplacedFile {
    let path: String
    private let descriptor: Int32
    /// What to write through (buffered); flushed before the file is closed, whichever way it ends, so that it never
    /// writes to a descriptor closed (and perhaps reused) after it.
    let sink: FileSink
    /// The file written, moved over `path` by ``commit()``; `nil` when `path` is written in place.
    private let temporary: String?
    private var done = false
    /// Whether the destination is replaced at ``commit()`` (a regular file, or none yet), so that a failure leaves it
    /// as it was; else it is written in place.
    var isReplaced: Bool { temporary != nil }

    /// - Throws: ``RuntimeError`` when the file cannot be created.
    init(_ path: String) throws(RuntimeError) {
        self.path = path
        var st = stat()
        let exists = stat(path, &st) == 0
        if exists && (st.st_mode & S_IFMT) != S_IFREG {
            temporary = nil
            descriptor = open(path, O_WRONLY | O_CLOEXEC)
        } else {
            let temporary = "\(path).partial-\(getpid())"
            self.temporary = temporary
            descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, exists ? st.st_mode & 0o777 : 0o644)
        }
        guard descriptor >= 0 else { throw RuntimeError("cannot write '\(path)': \(String(cString: strerror(errno)))") }
        sink = FileSink(descriptor: descriptor, buffered: true)
    }

    /// Closes the file and moves it over the destination.
    /// - Throws: ``RuntimeError`` when the move fails (the destination is then as it was).
    func commit() throws(RuntimeError) {
        sink.flush()
        if let code = sink.writeError {
            throw RuntimeError("cannot write to '\(path)': \(String(cString: strerror(code)))")
        }
        done = true
        close(descriptor)
        guard let temporary else { return }
        if rename(temporary, path) != 0 {
            let code = errno
            unlink(temporary)
            throw RuntimeError("cannot replace '\(path)': \(String(cString: strerror(code)))")
        }
    }

    deinit {
        guard !done else { return }
        sink.flush()
        close(descriptor)
        if let temporary { unlink(temporary) }
    }
}
