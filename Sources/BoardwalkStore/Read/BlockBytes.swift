import BoardwalkCodec
import BoardwalkModel

#if canImport(Glibc)
    import Glibc
#endif

/// What ``Snapshot/forEachBlockRun(onboarding:screens:time:_:)`` (and `onboarding_sessions` readers) read entries with: liblmdb's cursor
/// or a ``LeafWalk``.
protocol BlockEntries {
    var key: UnsafeRawBufferPointer { get }
    var value: UnsafeRawBufferPointer { get }
    mutating func seek(_ key: UnsafeRawBufferPointer) throws -> Bool
    mutating func next() throws -> Bool
}

extension Cursor: BlockEntries {}
extension LeafWalk: BlockEntries {}

/// Hands out a block's bytes, from the map or read with `pread` into a buffer reused for the next block
/// (``Snapshot/forEachBlockRun(onboarding:screens:time:_:)`` says which).
struct BlockFetcher {
    let file: MappedFile
    let pageSize: Int
    private var buffer: UnsafeMutableRawPointer? = nil
    private var capacity = 0
    /// The last window of the previous block read, `-2` before the first.
    private var previousWindow = -2
    /// The windows of the blocks read with `pread` so far.
    private var readWindows: [Int] = []

    init(file: MappedFile, pageSize: Int) {
        self.file = file
        self.pageSize = pageSize
    }

    /// Frees the buffer and marks the windows read with `pread` as read once (a later scan reads them through
    /// the map).
    mutating func release() {
        buffer?.deallocate()
        buffer = nil
        if let windows = file.windows {
            for w in readWindows { windows.raise(w, to: .readOnce) }
        }
        readWindows = []
    }

    /// The bytes of `value` (a value LMDB handed out, already checked to lie within the file), valid until the next
    /// call.
    @inline(__always)
    mutating func bytes(_ value: UnsafeRawBufferPointer) throws -> UnsafeRawBufferPointer {
        guard let windows = file.windows, let start = value.baseAddress, value.count > 0 else { return value }
        let address = UInt(bitPattern: start)
        guard address >= file.mapStart, address < file.mapEnd else { return value }
        let offset = Int(address - file.mapStart)
        // An overflow value's data starts right after its first page's 16-byte header; any other value sits in the
        // leaf page just read (by the walk or by liblmdb).
        guard offset % pageSize == 16 else { return value }
        let first = offset >> MapWindows.shift, last = (offset + value.count - 1) >> MapWindows.shift
        let previous = previousWindow
        previousWindow = last
        var untouched = true, mapped = true
        for w in first...last {
            let state = windows.state(w)
            if state != .mapped { mapped = false }
            if state != .untouched { untouched = false }
        }
        if mapped { return value }
        if !untouched || previous == first || previous == first - 1 {
            for w in first...last { windows.raise(w, to: .mapped) }
            return value
        }
        // Marked as read once when the scan ends: a window holding two blocks of this scan is read twice with
        // `pread` rather than once each way (measured: reading every block of a scattered scan with `pread` beat
        // mapping the windows that hold two or three of its blocks).
        readWindows.append(first)
        if last != first { readWindows.append(last) }
        return try read(offset: offset, count: value.count)
    }

    private mutating func read(offset: Int, count: Int) throws -> UnsafeRawBufferPointer {
        if count > capacity {
            buffer?.deallocate()
            capacity = max(count, 64 << 10)
            buffer = .allocate(byteCount: capacity, alignment: 16)
        }
        var done = 0
        while done < count {
            let n = pread(file.descriptor, buffer! + done, count - done, off_t(offset + done))
            if n > 0 {
                done += n
            } else if n == 0 {
                throw StoreError(
                    .corrupt,
                    "a block (\(count) bytes at offset \(offset)) lies past the end of data.mdb: "
                        + "the store is damaged")
            } else if errno != EINTR {
                throw StoreError.system(errno, context: "pread(data.mdb, \(count) bytes at offset \(offset))")
            }
        }
        return UnsafeRawBufferPointer(start: buffer, count: count)
    }
}
