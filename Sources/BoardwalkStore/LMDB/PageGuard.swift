internal import CLMDB

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Checks the branch and leaf pages a liblmdb call is about to read, before it reads them: liblmdb trusts them, and a
/// damaged one makes it assert (`IS_LEAF(mp)`, `IS_BRANCH(mp)`), or read outside the page or the map. One per
/// transaction (``Transaction/pages``), remembering the pages it has checked.
///
/// A search for a key reads the pages on the way from the database's root to the leaf where the key lands, choosing
/// each child as liblmdb does (the last node whose key is at or before the key; bytewise order, then length); a step
/// past either end of a leaf reads the neighbouring leaf through the lowest branch that has one. Each such page is
/// checked whole, as the page check does (``LMDBPage``): within the file as the transaction began, carrying its own
/// number, a branch above the record's depth (with at least two nodes, which liblmdb asserts) and a leaf at it, every
/// node and key inside the page, every child within the file, every value inside its page or on an overflow run that
/// ends inside the file.
///
/// The walk follows the tree of the last commit (the roots in the main database), read through the map. In a read
/// transaction that is the tree liblmdb reads. In a write transaction liblmdb reads its own copies of the pages it
/// has changed and the committed pages it has not: those are the pages checked here, since none of them is written
/// before the commit.
///
/// Damage throws ``StoreError`` with ``StoreError/Kind/corrupt``, naming the database, the level and the page.
final class PageGuard {
    private let file: MappedFile
    private let pageSize: Int
    /// Pages of the file as the transaction began.
    private let pages: UInt64
    private let handle: OpaquePointer
    /// Each database's committed root and depth, read once, by `dbi` (depth 0: not read yet; root `.max`: empty).
    /// Unsafe storage: a lookup is on every liblmdb call, where a dictionary's hashing and the class's exclusivity
    /// checks cost more than the walk.
    private let roots: UnsafeMutablePointer<(root: UInt64, depth: Int)>
    private static let maxDatabases = 64
    /// Pages checked whole, by page number modulo its size (a page pushed out is checked again when met again).
    private let checked: UnsafeMutablePointer<UInt64>
    private static let checkedSlots = 512

    /// A guard for the transaction `handle` over `file`, or `nil` when the store does not read LMDB's pages itself
    /// (an unknown page layout, ``PageLayout``) or the map's address is not known.
    init?(handle: OpaquePointer, file: MappedFile, pageSize: Int) {
        guard file.readsPages, file.mapStart != 0, file.fileEnd > file.mapStart else { return nil }
        self.handle = handle
        self.file = file
        self.pageSize = pageSize
        pages = UInt64(file.fileEnd - file.mapStart) / UInt64(pageSize)
        roots = .allocate(capacity: PageGuard.maxDatabases)
        roots.initialize(repeating: (0, 0), count: PageGuard.maxDatabases)
        checked = .allocate(capacity: PageGuard.checkedSlots)
        checked.initialize(repeating: 0, count: PageGuard.checkedSlots)  // page 0 is a meta page, never in a tree
    }

    deinit {
        roots.deallocate()
        checked.deallocate()
    }

    /// Where a check goes at the leaf: the leaf alone, or its neighbour too when the key lies at or past its edge.
    enum Reach {
        /// The leaf where the key lands (`mdb_get`, a put or delete by key).
        case leaf
        /// The leaf and, when the key lies past its last node, the next leaf (`MDB_SET_RANGE`), or when it is
        /// its last node, the next leaf too (`MDB_NEXT` from there).
        case after
        /// The leaf and, when the key is at or before its first node, the previous leaf (`MDB_PREV` from there).
        case before
        /// Both neighbours (a delete may merge the leaf with either).
        case both
    }

    /// Where a search lands: the index of the first node at or after the key in its leaf, the leaf's number of
    /// nodes, and its first and last keys (in the map, valid for the transaction).
    struct Landing {
        var index: Int
        /// The leaf, checked whole.
        var leaf: LMDBPage
        var count: Int { leaf.count }

        /// The index of the first node of ``leaf`` at or after `key`.
        func index(of key: UnsafeRawBufferPointer) -> Int {
            var lo = 0, hi = leaf.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if PageGuard.compare(leaf.checkedKey(mid), key) < 0 { lo = mid + 1 } else { hi = mid }
            }
            return lo
        }

        /// Whether `key` lies between the leaf's first and last keys, where liblmdb seeks in the leaf alone.
        func holds(_ key: UnsafeRawBufferPointer) -> Bool {
            leaf.count > 0 && PageGuard.compare(key, leaf.checkedKey(0)) >= 0
                && PageGuard.compare(key, leaf.checkedKey(leaf.count - 1)) <= 0
        }
    }

    /// Checks the pages a search for `key` in `db` reads, and the neighbours `reach` asks for.
    /// - Returns: where the search lands (`nil` for an empty database or an empty leaf).
    @discardableResult
    func search(_ db: Database, key: UnsafeRawBufferPointer, reach: Reach) throws -> Landing? {
        try descend(db, to: key) { path, depth, leaf, lo in
            if reach != .leaf && reach != .before && lo >= leaf.count - 1 {
                try neighbour(db, path, depth: depth, forward: true)
            }
            if reach != .leaf && reach != .after && lo == 0 {
                try neighbour(db, path, depth: depth, forward: false)
            }
            guard leaf.count > 0 else { return nil }
            return Landing(index: lo, leaf: leaf)
        }
    }

    /// Checks the pages a step from the entry at `key` in `db` reads, forward or back: the way to its leaf, and when
    /// the entry is its leaf's last (first) the neighbouring leaf and the branches to it, as
    /// ``search(_:key:reach:)`` does with `.after` (`.before`).
    /// - Returns: where the step lands, the next (previous) entry's leaf and index; `nil` past the tree's last
    ///   (first) entry, or for an empty database.
    func step(_ db: Database, from key: UnsafeRawBufferPointer, forward: Bool) throws -> Landing? {
        try descend(db, to: key) { path, depth, leaf, lo in
            if forward {
                let next = lo < leaf.count && PageGuard.compare(leaf.checkedKey(lo), key) == 0 ? lo + 1 : lo
                if next < leaf.count { return Landing(index: next, leaf: leaf) }
                guard let after = try neighbour(db, path, depth: depth, forward: true), after.count > 0 else {
                    return nil
                }
                return Landing(index: 0, leaf: after)
            }
            if lo > 0 { return Landing(index: lo - 1, leaf: leaf) }
            guard let before = try neighbour(db, path, depth: depth, forward: false), before.count > 0 else {
                return nil
            }
            return Landing(index: before.count - 1, leaf: before)
        }
    }

    /// Checks the pages from the root of `db` down to the leaf where `key` lands, each child chosen as liblmdb chooses
    /// it, and calls `atLeaf` with the path taken (each level's page, node and node count), the tree's depth, the
    /// leaf and the index of its first node at or after `key`; `nil` for an empty database.
    @inline(__always)
    private func descend<R>(
        _ db: Database, to key: UnsafeRawBufferPointer,
        _ atLeaf: (UnsafeMutableBufferPointer<(page: UInt64, index: Int, count: Int)>, Int, LMDBPage, Int) throws -> R?
    ) throws -> R? {
        guard let (root, depth) = try tree(db) else { return nil }
        return try withUnsafeTemporaryAllocation(of: (page: UInt64, index: Int, count: Int).self, capacity: depth) {
            path in
            var page = root
            for level in 0..<(depth - 1) {
                let view = try load(db, page, level: level, depth: depth)
                var lo = 1, hi = view.count  // the first node after the key
                while lo < hi {
                    let mid = (lo + hi) / 2
                    if PageGuard.compare(view.checkedKey(mid), key) <= 0 { lo = mid + 1 } else { hi = mid }
                }
                path[level] = (page, lo - 1, view.count)
                page = view.checkedChild(lo - 1)
            }
            let leaf = try load(db, page, level: depth - 1, depth: depth)
            var lo = 0, hi = leaf.count  // the first node at or after the key
            while lo < hi {
                let mid = (lo + hi) / 2
                if PageGuard.compare(leaf.checkedKey(mid), key) < 0 { lo = mid + 1 } else { hi = mid }
            }
            path[depth - 1] = (page, lo, leaf.count)
            return try atLeaf(path, depth, leaf, lo)
        }
    }

    /// Checks the pages from the root of `db` down its first (`last` false) or last edge.
    /// - Returns: the number of nodes of the leaf reached (`nil` for an empty database).
    @discardableResult
    func edge(_ db: Database, last: Bool) throws -> Int? {
        guard let (root, depth) = try tree(db) else { return nil }
        var page = root
        for level in 0..<depth {
            let view = try load(db, page, level: level, depth: depth)
            if level == depth - 1 { return view.count }
            page = view.checkedChild(last ? view.count - 1 : 0)
        }
        return nil
    }

    /// Checks the leaf after (or before) the one at the bottom of `path`, and the branches on the way to it: through
    /// the lowest branch of the path with a node after (before) the one taken, then down the first (last) nodes.
    /// Nothing when the leaf is the tree's last (first).
    /// - Returns: the neighbouring leaf; `nil` when there is none.
    @discardableResult
    private func neighbour(
        _ db: Database, _ path: UnsafeMutableBufferPointer<(page: UInt64, index: Int, count: Int)>, depth: Int,
        forward: Bool
    ) throws -> LMDBPage? {
        var up = depth - 2
        while up >= 0 && (forward ? path[up].index + 1 >= path[up].count : path[up].index == 0) { up -= 1 }
        guard up >= 0 else { return nil }
        var view = try load(db, path[up].page, level: up, depth: depth)
        var page = view.checkedChild(path[up].index + (forward ? 1 : -1))
        for level in (up + 1)..<depth {
            view = try load(db, page, level: level, depth: depth)
            if level == depth - 1 { return view }
            page = view.checkedChild(forward ? 0 : view.count - 1)
        }
        return nil
    }

    /// The committed root and depth of `db` (`nil` when it is empty), from its record in the main database.
    private func tree(_ db: Database) throws -> (UInt64, Int)? {
        let slot = Int(db.dbi)
        if slot < PageGuard.maxDatabases, roots[slot].depth != 0 {
            let known = roots[slot]
            return known.root == .max ? nil : (known.root, known.depth)
        }
        var k = MDB_val(mv_size: db.name.utf8.count, mv_data: nil)
        var v = MDB_val()
        let rc = db.name.withCString { name -> Int32 in
            k.mv_data = UnsafeMutableRawPointer(mutating: name)
            return mdb_get(handle, 1, &k, &v)  // MAIN_DBI
        }
        if rc == MDB_NOTFOUND {
            // Created in this transaction: nothing committed to read.
            if slot < PageGuard.maxDatabases { roots[slot] = (.max, -1) }
            return nil
        }
        try check(rc, "mdb_get(main, \(db.name))")
        guard v.mv_size == 48, let record = UnsafeRawPointer(v.mv_data) else {
            throw StoreError(.corrupt, "\(db.name): its record in the main database is \(v.mv_size) bytes, not 48")
        }
        let flags = record.loadUnaligned(fromByteOffset: 4, as: UInt16.self)
        let depth = Int(record.loadUnaligned(fromByteOffset: 6, as: UInt16.self))
        let root = record.loadUnaligned(fromByteOffset: 40, as: UInt64.self)
        guard flags == 0 else {
            throw StoreError(
                .corrupt, "\(db.name): its record has flags 0x\(String(flags, radix: 16)), which this store never sets")
        }
        guard root == .max || (depth >= 1 && depth <= 32) else {
            throw StoreError(.corrupt, "\(db.name): its record says depth \(depth)")
        }
        if slot < PageGuard.maxDatabases { roots[slot] = (root, root == .max ? -1 : depth) }
        return root == .max ? nil : (root, depth)
    }

    /// Page `page` at `level` of a tree `depth` deep, checked whole the first time (so that its nodes can be read
    /// with ``LMDBPage/checkedKey(_:)`` and ``LMDBPage/checkedChild(_:)``).
    private func load(_ db: Database, _ page: UInt64, level: Int, depth: Int) throws -> LMDBPage {
        guard page >= 2, page < pages else {
            throw fault(db, level, PageFault("page \(page) lies outside the file's \(pages) pages"))
        }
        let bytes = UnsafeRawBufferPointer(
            start: UnsafeRawPointer(bitPattern: file.mapStart + UInt(page) * UInt(pageSize)), count: pageSize)
        let isLeaf = level == depth - 1
        do {
            let view = try LMDBPage(bytes, number: page, isLeaf: isLeaf)
            let memo = checked + Int(page % UInt64(PageGuard.checkedSlots))
            if memo.pointee == page { return view }
            if !isLeaf && view.count < 2 { throw PageFault("branch page \(page) has \(view.count) node(s)") }
            for i in 0..<view.count {
                let node = try view.node(i)
                if !isLeaf {
                    guard node.child >= 2, node.child < pages else {
                        throw PageFault("page \(page), node \(i) points to page \(node.child), outside the file")
                    }
                    continue
                }
                switch node.flags {
                case 0:
                    _ = try view.inlineData(node, i)
                case LMDBPage.bigData:
                    let first = try view.overflowPage(node, i)
                    let (start, overflow) = first.multipliedReportingOverflow(by: UInt64(pageSize))
                    guard first >= 2, first < pages, !overflow,
                        start + 16 + UInt64(node.size) <= UInt64(file.fileEnd - file.mapStart)
                    else {
                        throw PageFault(
                            "page \(page), node \(i): its value (\(node.size) bytes on page \(first)) lies outside "
                                + "the file")
                    }
                default:
                    throw PageFault("page \(page), node \(i) has flags 0x\(String(node.flags, radix: 16))")
                }
            }
            memo.pointee = page
            return view
        } catch let error as PageFault {
            throw fault(db, level, error)
        }
    }

    private func fault(_ db: Database, _ level: Int, _ fault: PageFault) -> StoreError {
        StoreError(.corrupt, "\(db.name), level \(level + 1): \(fault); the store is damaged")
    }

    /// Byte-wise comparison, then length (LMDB's default key order).
    static func compare(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
        let n = min(a.count, b.count)
        if n > 0 {
            let c = memcmp(a.baseAddress!, b.baseAddress!, n)
            if c != 0 { return Int(c) }
        }
        return a.count - b.count
    }
}

extension LMDBPage {
    /// The key of node `i` of a page whose nodes were all checked (``PageGuard``): no bounds to test again.
    @inline(__always)
    func checkedKey(_ i: Int) -> UnsafeRawBufferPointer {
        let at = Int(bytes.loadUnaligned(fromByteOffset: 16 + 2 * i, as: UInt16.self))
        let keySize = Int(bytes.loadUnaligned(fromByteOffset: at + 6, as: UInt16.self))
        return UnsafeRawBufferPointer(start: bytes.baseAddress! + at + 8, count: keySize)
    }

    /// The child page of branch node `i` of a page whose nodes were all checked.
    @inline(__always)
    func checkedChild(_ i: Int) -> UInt64 {
        let at = Int(bytes.loadUnaligned(fromByteOffset: 16 + 2 * i, as: UInt16.self))
        return UInt64(bytes.loadUnaligned(fromByteOffset: at, as: UInt16.self))
            | UInt64(bytes.loadUnaligned(fromByteOffset: at + 2, as: UInt16.self)) << 16
            | UInt64(bytes.loadUnaligned(fromByteOffset: at + 4, as: UInt16.self)) << 32
    }
}
