internal import CLMDB

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// A check of LMDB's own pages, read from the file rather than through LMDB: liblmdb trusts its branch and leaf
// pages, and a damaged one makes it assert or read out of bounds (`check` itself died on some bit flips, in
// `mdb_cursor_next`: "Assertion 'IS_LEAF(mp)' failed"). `Store.check()` runs this first and touches no cursor when it
// finds damage. Written by hand: liblmdb has no verifier (`mdb_stat` and `mdb_dump` walk the same trees with the
// same trust).
//
// The layout is LMDB 0.9's on 64-bit hosts (``PageLayout``): branch and leaf pages as ``LMDBPage`` reads them; the
// first page of an overflow run has its number of pages (4) where those have their free-space bounds; pages 0 and 1
// hold the meta: after the header, magic (4), version (4), address (8), map size (8), the free and main databases'
// records (48 bytes each: pad 4, flags 2, depth 2, branch, leaf and overflow pages, entries, root page: 8 each),
// the last page used (8) and the transaction id (8). The main database's leaves hold the named databases: key the
// name, flag `F_SUBDATA`, data a 48-byte record.

/// What ``Transaction/checkPages(limit:)`` reads of one database's record.
struct TreeRecord {
    var name: String
    /// The record's first 4 bytes: 0 for a database (the key size of fixed-size duplicates, which no Boardwalk
    /// database has); in the free database's record inside the meta, the page size.
    var pad: UInt32
    /// `mdb_dbi_open` flags kept with the database: 0 for Boardwalk's (plain byte-ordered keys, one value each);
    /// the free database has `MDB_INTEGERKEY`. A flipped flag changes how LMDB compares and reads keys
    /// (`MDB_INTEGERKEY` on `events` made queries spin forever).
    var flags: UInt16
    var depth: Int
    var branchPages: UInt64
    var leafPages: UInt64
    var overflowPages: UInt64
    var entries: UInt64
    var root: UInt64

    init(name: String, _ bytes: UnsafeRawBufferPointer) {
        self.name = name
        pad = bytes.loadUnaligned(fromByteOffset: 0, as: UInt32.self)
        flags = bytes.loadUnaligned(fromByteOffset: 4, as: UInt16.self)
        depth = Int(bytes.loadUnaligned(fromByteOffset: 6, as: UInt16.self))
        branchPages = bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
        leafPages = bytes.loadUnaligned(fromByteOffset: 16, as: UInt64.self)
        overflowPages = bytes.loadUnaligned(fromByteOffset: 24, as: UInt64.self)
        entries = bytes.loadUnaligned(fromByteOffset: 32, as: UInt64.self)
        root = bytes.loadUnaligned(fromByteOffset: 40, as: UInt64.self)
    }
}

/// The walk's state: the file, what has been seen, what was found.
struct PageWalk {
    let fd: Int32
    let pageSize: Int
    let lastPage: UInt64
    let limit: Int
    var problems: [String] = []
    /// One bit per page up to `lastPage`: reached from a tree or listed free.
    var seen: [UInt64]
    var buffer: UnsafeMutableRawBufferPointer
    /// The named databases found in the main database's leaves.
    var named: [TreeRecord] = []
    /// The tree being walked compares its keys as native unsigned integers (`MDB_INTEGERKEY`): the free database.
    var integerKeys = false
    /// The pages the free database's leaves list inline, and its lists on overflow runs (first page, bytes).
    var freePages: [UInt64] = []
    var freeListRuns: [(first: UInt64, size: Int)] = []

    init(fd: Int32, pageSize: Int, lastPage: UInt64, limit: Int) {
        self.fd = fd
        self.pageSize = pageSize
        self.lastPage = lastPage
        self.limit = limit
        seen = [UInt64](repeating: 0, count: Int(lastPage / 64) + 1)
        buffer = .allocate(byteCount: pageSize, alignment: 16)
    }

    var full: Bool { problems.count >= limit }

    mutating func report(_ text: String) {
        if problems.count < limit { problems.append(text) }
    }

    /// Marks `page` seen; false (and a problem) when it was seen before.
    mutating func mark(_ page: UInt64, _ what: String) -> Bool {
        let (word, bit) = (Int(page / 64), page % 64)
        if seen[word] & (1 << bit) != 0 {
            report("page \(page) (\(what)) is reached twice")
            return false
        }
        seen[word] |= 1 << bit
        return true
    }

    /// Reads page `page` into `buffer`; false (and a problem) when it cannot be read.
    mutating func read(_ page: UInt64, _ what: String) -> Bool {
        guard page >= 2, page <= lastPage else {
            report("\(what) points to page \(page), outside pages 2…\(lastPage)")
            return false
        }
        let n = pread(fd, buffer.baseAddress, pageSize, off_t(page) * off_t(pageSize))
        guard n == pageSize else {
            report("\(what): page \(page) cannot be read (\(n < 0 ? String(cString: strerror(errno)) : "short read"))")
            return false
        }
        guard buffer.loadUnaligned(fromByteOffset: 0, as: UInt64.self) == page else {
            report("\(what): page \(page) says it is page \(buffer.loadUnaligned(fromByteOffset: 0, as: UInt64.self))")
            return false
        }
        return true
    }

    /// Walks the tree of `tree`, counting its pages and entries against its record. The free database (`isFree`)
    /// has integer keys (transaction ids in the host's byte order), the others keys ordered as bytes.
    mutating func walk(_ tree: TreeRecord, isMain: Bool, isFree: Bool = false) {
        let expected: (pad: UInt32, flags: UInt16) = isFree ? (UInt32(pageSize), 0x08) : (0, 0)
        guard tree.pad == expected.pad, tree.flags == expected.flags else {
            report(
                "\(tree.name): its record has flags 0x\(String(tree.flags, radix: 16)) and first field \(tree.pad); "
                    + "expected 0x\(String(expected.flags, radix: 16)) and \(expected.pad)")
            return
        }
        integerKeys = isFree
        var counts = (branch: UInt64(0), leaf: UInt64(0), overflow: UInt64(0), entries: UInt64(0))
        if tree.root == UInt64.max {
            if tree.entries != 0 || tree.depth != 0 {
                report("\(tree.name): no root page, but \(tree.entries) entries at depth \(tree.depth)")
            }
            return
        }
        guard tree.depth >= 1, tree.depth <= 32 else {
            report("\(tree.name): depth \(tree.depth) is impossible")
            return
        }
        visit(tree.root, level: 1, tree: tree, isMain: isMain, counts: &counts)
        if full { return }
        if counts != (tree.branchPages, tree.leafPages, tree.overflowPages, tree.entries) {
            report(
                "\(tree.name): its record says \(tree.branchPages) branch, \(tree.leafPages) leaf and "
                    + "\(tree.overflowPages) overflow pages and \(tree.entries) entries; the tree has \(counts.branch), "
                    + "\(counts.leaf), \(counts.overflow) and \(counts.entries)")
        }
    }

    private mutating func visit(
        _ page: UInt64, level: Int, tree: TreeRecord, isMain: Bool,
        counts: inout (branch: UInt64, leaf: UInt64, overflow: UInt64, entries: UInt64)
    ) {
        if full { return }
        let what = "\(tree.name), level \(level)"
        guard read(page, what), mark(page, what) else { return }
        let isLeaf = level == tree.depth
        let view: LMDBPage
        do {
            view = try LMDBPage(UnsafeRawBufferPointer(buffer), number: page, isLeaf: isLeaf)
        } catch {
            report("\(what): \(error)")
            return
        }
        if isLeaf { counts.leaf += 1 } else { counts.branch += 1 }
        // The nodes first (the buffer is reused by the pages below).
        var next: [Next] = []
        var previousKey: [UInt8]? = nil
        for i in 0..<view.count {
            let node: LMDBPage.Node
            do {
                node = try view.node(i)
            } catch {
                report("\(what): \(error)")
                return
            }
            let key = Array(node.key)
            // Keys ascend within a page (a branch page's first key is not compared: it stands for everything
            // below the second).
            if let previousKey, isLeaf || i >= 2, !PageWalk.ascending(previousKey, key, integers: integerKeys) {
                report("\(what): page \(page), node \(i): keys are out of order")
                return
            }
            previousKey = key
            if !isLeaf {
                next.append(.child(node.child))
                continue
            }
            counts.entries += 1
            switch node.flags {
            case 0:
                let data: UnsafeRawBufferPointer
                do {
                    data = try view.inlineData(node, i)
                } catch {
                    report("\(what): \(error)")
                    return
                }
                // The free database's values are lists of free pages: kept to mark once every tree is walked.
                if integerKeys { freePages += Self.pageList(data) }
            case LMDBPage.bigData:  // the data is on overflow pages
                let first: UInt64
                do {
                    first = try view.overflowPage(node, i)
                } catch {
                    report("\(what): \(error)")
                    return
                }
                next.append(.overflow(first, size: node.size))
                if integerKeys { freeListRuns.append((first, node.size)) }
            case LMDBPage.subData where isMain:  // a named database's record
                guard node.size == 48, node.dataAt + 48 <= pageSize else {
                    report("\(what): page \(page), node \(i): a database record of \(node.size) bytes")
                    return
                }
                let name = String(decoding: key, as: UTF8.self)
                let record = UnsafeRawBufferPointer(rebasing: buffer[node.dataAt..<(node.dataAt + 48)])
                named.append(TreeRecord(name: name, record))
            default:
                let flags = String(node.flags, radix: 16)
                report("\(what): page \(page), node \(i) has flags 0x\(flags), which this store never writes")
                return
            }
        }
        for step in next where !full {
            switch step {
            case .child(let child): visit(child, level: level + 1, tree: tree, isMain: isMain, counts: &counts)
            case .overflow(let first, let size): overflow(first, size: size, what: what, counts: &counts)
            }
        }
    }

    /// Whether `b` comes after `a`: as bytes, or (`integers`) as unsigned integers in the host's byte order of the
    /// same size, 4 or 8 bytes (LMDB's `MDB_INTEGERKEY` order; any other size is out of order).
    static func ascending(_ a: [UInt8], _ b: [UInt8], integers: Bool) -> Bool {
        guard integers else { return a.lexicographicallyPrecedes(b) }
        guard a.count == b.count, a.count == 8 || a.count == 4 else { return false }
        func value(_ k: [UInt8]) -> UInt64 { k.reversed().reduce(0) { $0 << 8 | UInt64($1) } }
        return value(a) < value(b)
    }

    /// Where a page's walk goes next: a child page, or the overflow run of a leaf's value.
    private enum Next {
        case child(UInt64)
        case overflow(UInt64, size: Int)
    }

    /// The first page of an overflow run and the run's pages, which must hold `size` bytes.
    private mutating func overflow(
        _ page: UInt64, size: Int, what: String,
        counts: inout (branch: UInt64, leaf: UInt64, overflow: UInt64, entries: UInt64)
    ) {
        let what = what + ", overflow"
        guard read(page, what) else { return }
        let flags = buffer.loadUnaligned(fromByteOffset: 10, as: UInt16.self)
        let pages = UInt64(buffer.loadUnaligned(fromByteOffset: 12, as: UInt32.self))
        guard flags & 0x7F == LMDBPage.overflowFlag else {
            report("\(what): page \(page) has flags 0x\(String(flags, radix: 16)), not an overflow page")
            return
        }
        guard pages >= 1, page + pages - 1 <= lastPage, UInt64(size) + 16 <= pages * UInt64(pageSize) else {
            report(
                "\(what): page \(page) begins a run of \(pages) pages, which cannot hold \(size) bytes inside the file")
            return
        }
        for p in page..<(page + pages) where !mark(p, what) { return }
        counts.overflow += pages
    }

    /// Marks the pages the free database lists (``freePages``, and the lists on the overflow runs of
    /// ``freeListRuns``, read whole now that the walk has checked the runs): each must be in the file and in no tree.
    mutating func markFree() {
        var pages = freePages
        for (first, size) in freeListRuns {
            var bytes = [UInt8](repeating: 0, count: size)
            let n = bytes.withUnsafeMutableBytes {
                pread(fd, $0.baseAddress, size, off_t(first) * off_t(pageSize) + 16)
            }
            guard n == size else { report("free pages: the list on page \(first) cannot be read"); return }
            pages += bytes.withUnsafeBytes { Self.pageList($0) }
        }
        for p in pages {
            guard p >= 2, p <= lastPage else { report("free pages: page \(p) is outside pages 2…\(lastPage)"); return }
            guard mark(p, "listed free") else { return }
        }
    }

    /// A free list: a count, then that many page numbers (8 bytes each).
    private static func pageList(_ bytes: UnsafeRawBufferPointer) -> [UInt64] {
        guard bytes.count >= 8 else { return [] }
        let n = min(Int(clamping: bytes.loadUnaligned(as: UInt64.self)), bytes.count / 8 - 1)
        return (0..<n).map { bytes.loadUnaligned(fromByteOffset: 8 + 8 * $0, as: UInt64.self) }
    }
}

/// ``Transaction/checkPages(limit:mainOnly:)`` could not find its snapshot's meta page: another process committed
/// twice since the transaction began (or both meta pages are damaged, which LMDB would have refused at open).
struct PagesMoved: Error {
    var snapshot: UInt64
}

extension Transaction {
    /// Checks the B-trees of the snapshot this read transaction sees, reading the data file with `pread`, not
    /// through LMDB: every page of every database is within the file, says its own number, has the type its
    /// level needs, keeps its nodes inside it in key order; overflow runs fit; each database's page and entry
    /// counts match its record; no page is reached twice; together with the free list, every page up to the last
    /// one used is accounted for. Returns up to `limit` problems, each naming the database and page; empty when
    /// the trees are sound. Never traps on damage.
    ///
    /// With `mainOnly`, only the main database's tree is walked (the named databases' records, which `mdb_dbi_open`
    /// reads: a few pages), as `Store.open` does before opening them. With `trees`, the main database's and the
    /// named databases' of those names only (their records' flags too): what a reader of those databases relies on,
    /// without the free list and the count of every page, which need every tree.
    ///
    /// On a liblmdb whose page layout is not known (``PageLayout``), or with the page readers turned off, nothing is
    /// read and no problem is returned.
    ///
    /// - Throws: ``PagesMoved`` when another process committed twice since the transaction began (its snapshot's
    ///   meta page was overwritten): try again with a new transaction.
    /// - Complexity: O(pages of the file): one `pread` per branch, leaf and first overflow page; `mainOnly`: O(pages
    ///   of the main database), usually one.
    func checkPages(limit: Int = 20, mainOnly: Bool = false, trees: Set<String>? = nil) throws -> [String] {
        guard file.readsPages, let env = mdb_txn_env(handle) else { return [] }
        var fd: Int32 = -1
        try check(mdb_env_get_fd(env, &fd), "mdb_env_get_fd")
        var st = MDB_stat()
        try check(mdb_env_stat(env, &st), "mdb_env_stat")
        let pageSize = Int(st.ms_psize)
        let txnID = UInt64(UInt(bitPattern: mdb_txn_id(handle)))  // a damaged meta page can set the top bit
        // The meta this snapshot began from: the one of the two with this transaction's id.
        let meta = UnsafeMutableRawBufferPointer.allocate(byteCount: pageSize, alignment: 16)
        defer { meta.deallocate() }
        var picked = false
        for page in 0..<2 {
            guard pread(fd, meta.baseAddress, pageSize, off_t(page * pageSize)) == pageSize else { continue }
            let magic = meta.loadUnaligned(fromByteOffset: 16, as: UInt32.self)
            let txnid = meta.loadUnaligned(fromByteOffset: 144, as: UInt64.self)
            if magic == 0xBEEF_C0DE && txnid == txnID { picked = true; break }
        }
        guard picked else {
            // Another process committed twice since this transaction began: the meta pages describe newer
            // snapshots, whose pages this transaction does not protect. Not damage; the caller tries again.
            throw PagesMoved(snapshot: txnID)
        }
        let lastPage = meta.loadUnaligned(fromByteOffset: 136, as: UInt64.self)
        var st2 = stat()
        // Division, not (lastPage + 1) · pageSize: a damaged last page near 2⁶⁴ overflowed that (a trap at open).
        guard fstat(fd, &st2) == 0, lastPage >= 1, lastPage < UInt64(st2.st_size) / UInt64(pageSize) else {
            return ["meta: the last page used, \(lastPage), lies past the end of the file"]
        }
        var walk = PageWalk(fd: fd, pageSize: pageSize, lastPage: lastPage, limit: limit)
        defer { walk.buffer.deallocate() }
        let free = TreeRecord(name: "free pages", UnsafeRawBufferPointer(rebasing: meta[40..<88]))
        let main = TreeRecord(name: "main database", UnsafeRawBufferPointer(rebasing: meta[88..<136]))
        if mainOnly {
            walk.walk(main, isMain: true)
            // The named databases' records too (their flags decide how LMDB reads them), not their trees.
            for tree in walk.named where tree.pad != 0 || tree.flags != 0 {
                walk.report(
                    "\(tree.name): its record has flags 0x\(String(tree.flags, radix: 16)) and first field \(tree.pad); expected 0 and 0"
                )
            }
            return walk.problems
        }
        if let trees {
            walk.walk(main, isMain: true)
            for tree in walk.named where trees.contains(tree.name) && !walk.full {
                if tree.pad != 0 || tree.flags != 0 {
                    walk.report(
                        "\(tree.name): its record has flags 0x\(String(tree.flags, radix: 16)) and first field \(tree.pad); expected 0 and 0"
                    )
                } else {
                    walk.walk(tree, isMain: false)
                }
            }
            return walk.problems
        }
        walk.walk(free, isMain: false, isFree: true)
        walk.walk(main, isMain: true)
        for tree in walk.named where !walk.full { walk.walk(tree, isMain: false) }
        if walk.problems.isEmpty { walk.markFree() }
        if walk.problems.isEmpty {
            var missing: [UInt64] = []
            var page: UInt64 = 2
            while page <= lastPage {
                if walk.seen[Int(page / 64)] & (1 << (page % 64)) == 0 { missing.append(page) }
                page += 1
            }
            if !missing.isEmpty {
                walk.report("\(missing.count) page(s) are neither in a database nor free, the first \(missing[0])")
            }
        }
        return walk.problems
    }
}
