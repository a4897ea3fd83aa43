internal import CLMDB

#if canImport(Glibc)
    import Glibc
#endif

/// A walk over one database's entries in key order, reading LMDB's branch and leaf pages itself (with `pread`
/// for pages of windows this process has not touched and that do not follow the previous page read, through the
/// map otherwise, as ``BlockFetcher`` reads blocks) instead of through liblmdb's
/// cursor, which touches each page through the map: a page fault (4–5 µs here) for every leaf of a scan whose
/// leaves are scattered through the file, against about 2 µs for a `pread`.
///
/// Only for a read transaction (a write transaction's own pages are not in the file) whose map address is known.
/// The layout read is LMDB 0.9's (see PageCheck.swift). Each page is checked before use: its number within the
/// file as the transaction began (LMDB guarantees the pages reachable from a read transaction's root are not
/// reused while it runs), its own number in its header, its kind (branch above the record's depth, leaf at it),
/// its free-space bounds, and each node it reads within the page; a value must lie within the file. Damage throws
/// ``StoreError`` with ``StoreError/Kind/corrupt`` (liblmdb trusts these pages, `Store.check()` reports them).
struct LeafWalk {
    private struct Level {
        var page: UInt64 = .max
        /// The page, checked (`nil` before the first load).
        var view: LMDBPage? = nil
        var count: Int { view?.count ?? 0 }
        var index = 0
        /// Where a page read with `pread` goes (one page, reused).
        let buffer: UnsafeMutableRawPointer
    }

    private let name: String
    /// The database walked, for its values' seal (SealedValues.swift).
    private let db: Database
    private let file: MappedFile
    private let windows: MapWindows
    private let pageSize: Int
    private let pages: UInt64
    /// The database's root page (`.max` for an empty database).
    let root: UInt64
    private var levels: [Level]
    /// Windows of the pages read with `pread` (marked read once at ``release()``).
    private var readWindows: [Int] = []
    /// The window of the last page read, `-2` before the first.
    private var previousWindow = -2
    /// The entry the walk stands on (valid until the next move).
    private(set) var key = UnsafeRawBufferPointer(start: nil, count: 0)
    private(set) var value = UnsafeRawBufferPointer(start: nil, count: 0)

    /// A walk over `db`, or `nil` when the transaction cannot be read this way (a write transaction, an unknown
    /// map address, a liblmdb whose page layout is not known (``PageLayout``), a database whose record is not the
    /// plain kind): the caller then reads through liblmdb's cursor.
    init?(_ txn: Transaction, _ db: Database) throws {
        guard !txn.isWrite, txn.file.readsPages, let windows = txn.file.windows, txn.file.descriptor >= 0 else {
            return nil
        }
        // The database's record in the main database (`MAIN_DBI`, 1): flags, depth, page counts, root.
        var k = MDB_val(mv_size: db.name.utf8.count, mv_data: nil)
        var v = MDB_val()
        let rc = db.name.withCString { name -> Int32 in
            k.mv_data = UnsafeMutableRawPointer(mutating: name)
            return mdb_get(txn.handle, 1, &k, &v)
        }
        guard rc == 0, v.mv_size == 48, let record = UnsafeRawPointer(v.mv_data) else { return nil }
        let flags = record.loadUnaligned(fromByteOffset: 4, as: UInt16.self)
        let depth = Int(record.loadUnaligned(fromByteOffset: 6, as: UInt16.self))
        let root = record.loadUnaligned(fromByteOffset: 40, as: UInt64.self)
        guard flags == 0 else { return nil }
        name = db.name
        self.db = db
        file = txn.file
        self.windows = windows
        pageSize = txn.pageSize
        pages = UInt64(file.fileEnd - file.mapStart) / UInt64(pageSize)
        self.root = root
        if root == .max {
            levels = []  // an empty database
        } else {
            guard depth >= 1, depth <= 32 else {
                throw StoreError(.corrupt, "\(db.name): its record says depth \(depth)")
            }
            levels = (0..<depth).map { _ in Level(buffer: .allocate(byteCount: txn.pageSize, alignment: 16)) }
        }
    }

    /// Frees the page buffers and marks the windows read with `pread` as read once (a later walk or scan reads
    /// them through the map, as ``BlockFetcher`` does).
    mutating func release() {
        for level in levels { level.buffer.deallocate() }
        levels = []
        for w in readWindows { windows.raise(w, to: .readOnce) }
        readWindows = []
    }

    /// Positions at the first entry whose key is at or after `target`; `false` when there is none.
    mutating func seek(_ target: UnsafeRawBufferPointer) throws -> Bool {
        guard !levels.isEmpty else { return false }
        var page = root
        for depth in levels.indices {
            try load(depth, page)
            let level = levels[depth]
            if depth < levels.count - 1 {
                // The last node whose key is at or before the target (node 0 stands for everything before node 1).
                var lo = 1, hi = level.count  // the first node whose key is after the target
                while lo < hi {
                    let mid = (lo + hi) / 2
                    if PageGuard.compare(try nodeKey(depth, mid), target) <= 0 { lo = mid + 1 } else { hi = mid }
                }
                levels[depth].index = lo - 1
                page = try child(depth, lo - 1)
            } else {
                var lo = 0, hi = level.count  // the first node whose key is at or after the target
                while lo < hi {
                    let mid = (lo + hi) / 2
                    if PageGuard.compare(try nodeKey(depth, mid), target) < 0 { lo = mid + 1 } else { hi = mid }
                }
                levels[depth].index = lo
            }
        }
        return try settle()
    }

    /// Moves to the next entry; `false` after the last.
    mutating func next() throws -> Bool {
        guard let leaf = levels.indices.last else { return false }
        levels[leaf].index += 1
        return try settle()
    }

    /// Loads the entry at the leaf's index, climbing to the next leaf when the index is past the leaf's end.
    private mutating func settle() throws -> Bool {
        let leaf = levels.count - 1
        while levels[leaf].index >= levels[leaf].count {
            // Up to the lowest branch with a next child, then down its leftmost path.
            var up = leaf - 1
            while up >= 0 && levels[up].index + 1 >= levels[up].count { up -= 1 }
            guard up >= 0 else { return false }
            levels[up].index += 1
            for depth in (up + 1)...leaf {
                try load(depth, try child(depth - 1, levels[depth - 1].index))
                levels[depth].index = 0
            }
        }
        try loadEntry(leaf, levels[leaf].index)
        return true
    }

    // MARK: Pages and nodes

    private func corrupt(_ depth: Int, _ fault: PageFault) -> StoreError {
        StoreError(.corrupt, "\(name), level \(depth + 1): \(fault)")
    }

    /// `body`'s result, a ``PageFault`` thrown as ``StoreError/Kind/corrupt`` naming the database and level.
    @inline(__always)
    private func checked<T>(_ depth: Int, _ body: () throws(PageFault) -> T) throws -> T {
        do { return try body() } catch { throw corrupt(depth, error) }
    }

    /// Makes page `page` the page of level `depth` (read unless it already is).
    private mutating func load(_ depth: Int, _ page: UInt64) throws {
        if levels[depth].page == page { return }
        levels[depth].page = .max
        guard page >= 2, page < pages else {
            throw corrupt(depth, PageFault("page \(page) lies outside the file's \(pages) pages"))
        }
        let offset = Int(page) * pageSize
        let window = offset >> MapWindows.shift
        let bytes: UnsafeRawBufferPointer
        // Through the map when the window was read before, or when the previous page read lies in the same or the
        // preceding window (a tree written in key order, as in a compacted copy: one fault maps its neighbours).
        let previous = previousWindow
        previousWindow = window
        if windows.state(window) != .untouched || previous == window || previous == window - 1 {
            windows.raise(window, to: .mapped)
            bytes = UnsafeRawBufferPointer(
                start: UnsafeRawPointer(bitPattern: file.mapStart + UInt(offset)), count: pageSize)
        } else {
            let buffer = levels[depth].buffer
            var done = 0
            while done < pageSize {
                let n = pread(file.descriptor, buffer + done, pageSize - done, off_t(offset + done))
                if n > 0 {
                    done += n
                } else if n == 0 {
                    throw corrupt(depth, PageFault("page \(page) lies past the end of data.mdb"))
                } else if errno != EINTR {
                    throw StoreError.system(errno, context: "pread(data.mdb, page \(page))")
                }
            }
            readWindows.append(window)
            bytes = UnsafeRawBufferPointer(start: buffer, count: pageSize)
        }
        let isLeaf = depth == levels.count - 1
        levels[depth].view = try checked(depth) { () throws(PageFault) in
            try LMDBPage(bytes, number: page, isLeaf: isLeaf)
        }
        levels[depth].index = 0
        levels[depth].page = page
    }

    /// Node `i` of level `depth`, checked to hold its 8-byte header and its key.
    private func node(_ depth: Int, _ i: Int) throws -> LMDBPage.Node {
        let view = levels[depth].view!
        return try checked(depth) { () throws(PageFault) in try view.node(i) }
    }

    private func nodeKey(_ depth: Int, _ i: Int) throws -> UnsafeRawBufferPointer {
        try node(depth, i).key
    }

    /// The child page of branch node `i` of level `depth`.
    private func child(_ depth: Int, _ i: Int) throws -> UInt64 {
        try node(depth, i).child
    }

    /// Loads ``key`` and ``value`` from leaf node `i`: the value inline in the leaf, or on its overflow pages
    /// (an address in the map, checked to lie within the file; ``BlockFetcher`` decides how to read it).
    private mutating func loadEntry(_ depth: Int, _ i: Int) throws {
        let view = levels[depth].view!
        let node = try node(depth, i)
        key = node.key
        switch node.flags {
        case 0:
            value = try checked(depth) { () throws(PageFault) in try view.inlineData(node, i) }
        case LMDBPage.bigData:  // the value starts 16 bytes into its first overflow page
            let first = try checked(depth) { () throws(PageFault) in try view.overflowPage(node, i) }
            let (end, overflow) = first.multipliedReportingOverflow(by: UInt64(pageSize))
            let fileBytes = UInt64(file.fileEnd - file.mapStart)
            guard first >= 2, first < pages, !overflow, end + 16 + UInt64(node.size) <= fileBytes else {
                throw corrupt(
                    depth,
                    PageFault(
                        "page \(view.number), node \(i): its value (\(node.size) bytes on page "
                            + "\(first)) lies outside the file"))
            }
            let start = UnsafeRawPointer(bitPattern: file.mapStart + UInt(end) + 16)
            value = UnsafeRawBufferPointer(start: start, count: node.size)
        default:
            let flags = String(node.flags, radix: 16)
            throw corrupt(
                depth,
                PageFault(
                    "page \(view.number), node \(i) has flags 0x\(flags) (a sub-database or "
                        + "duplicates)"))
        }
        if db.sealed { value = try SealedValue.open(value, key: key, db) }
    }
}
