internal import CLMDB

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A database handle (`MDB_dbi`) with the name it was opened under, for error messages.
struct Database: Sendable {
    let dbi: UInt32
    let name: String
    /// Whether its values are stored sealed (SealedValues.swift): reads check and remove the checksum, puts add it.
    var sealed: Bool = false
}

/// A running LMDB transaction (`MDB_txn`), valid only inside the closure that received it.
///
/// Byte buffers returned by reads point into the memory map: lmdb.h, "Values returned from the
/// database are valid only until a subsequent update operation, or the end of the transaction."
struct Transaction {
    let handle: OpaquePointer
    let isWrite: Bool
    /// Where the data file lies in the memory map when the transaction began.
    let file: MappedFile
    /// Checks the pages each liblmdb call below will read before it reads them (`nil` where the store does not read
    /// LMDB's pages itself).
    let pages: PageGuard?

    init(handle: OpaquePointer, isWrite: Bool, file: MappedFile, pageSize: Int) {
        self.handle = handle
        self.isWrite = isWrite
        self.file = file
        pages = PageGuard(handle: handle, file: file, pageSize: pageSize)
    }

    /// The id of the commit the transaction reads (a read transaction) or makes (a write): `mdb_txn_id`.
    var id: UInt64 { UInt64(mdb_txn_id(handle)) }

    /// Opens (creating when `create` and the transaction writes) a named database. Wraps `mdb_dbi_open`.
    /// Returns `nil` when the database does not exist and is not created.
    func open(_ name: String, create: Bool) throws -> Database? {
        var dbi: MDB_dbi = 0
        let rc = mdb_dbi_open(handle, name, create && isWrite ? UInt32(MDB_CREATE) : 0, &dbi)
        if rc == MDB_NOTFOUND { return nil }
        try check(rc, "mdb_dbi_open(\(name))")
        return Database(dbi: dbi, name: name, sealed: Database.seals(name))
    }

    /// The value stored under `key`, or `nil`. Wraps `mdb_get`.
    @inline(__always)
    func get(_ db: Database, _ key: UnsafeRawBufferPointer) throws -> UnsafeRawBufferPointer? {
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var v = MDB_val()
        try pages?.search(db, key: key, reach: .leaf)
        let rc = mdb_get(handle, db.dbi, &k, &v)
        if rc == MDB_NOTFOUND { return nil }
        try check(rc, "mdb_get(\(db.name))")
        try file.check(v, db)
        let value = UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size)
        return db.sealed ? try SealedValue.open(value, key: key, db) : value
    }

    /// Stores `value` under `key`. Wraps `mdb_put`.
    /// - Returns: `false` when `flags` holds `MDB_NOOVERWRITE` or `MDB_APPEND` and the put was refused
    ///   with `MDB_KEYEXIST` (the transaction stays usable); `true` when stored.
    @inline(__always) @discardableResult
    func put(_ db: Database, _ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer, flags: UInt32 = 0) throws
        -> Bool
    {
        if db.sealed {
            return try SealedValue.withSealed(value, key: key) { sealed in
                try put(Database(dbi: db.dbi, name: db.name), key, sealed, flags: flags)
            }
        }
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var v = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
        if flags & PutFlags.append != 0 {
            try pages?.edge(db, last: true)
        } else {
            try pages?.search(db, key: key, reach: .leaf)
        }
        let rc = mdb_put(handle, db.dbi, &k, &v, flags)
        if rc == MDB_KEYEXIST { return false }
        try check(rc, "mdb_put(\(db.name))")
        return true
    }

    /// Deletes the entry under `key`; `false` when there is none. Wraps `mdb_del`.
    @discardableResult
    func delete(_ db: Database, _ key: UnsafeRawBufferPointer) throws -> Bool {
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        try pages?.search(db, key: key, reach: .both)  // a leaf left too small is merged with a neighbour
        let rc = mdb_del(handle, db.dbi, &k, nil)
        if rc == MDB_NOTFOUND { return false }
        try check(rc, "mdb_del(\(db.name))")
        return true
    }

    /// Deletes every entry of `db`, keeping the database. Wraps `mdb_drop` with `del` 0.
    func empty(_ db: Database) throws {
        try check(mdb_drop(handle, db.dbi, 0), "mdb_drop(\(db.name))")
    }

    /// The number of entries in `db` (`mdb_stat`).
    func entries(_ db: Database) throws -> Int {
        var stat = MDB_stat()
        try check(mdb_stat(handle, db.dbi, &stat), "mdb_stat(\(db.name))")
        return stat.ms_entries
    }

    /// Pages used by `db` (`mdb_stat`): branch, leaf and overflow.
    func pages(_ db: Database) throws -> Int {
        var stat = MDB_stat()
        try check(mdb_stat(handle, db.dbi, &stat), "mdb_stat(\(db.name))")
        return stat.ms_branch_pages + stat.ms_leaf_pages + stat.ms_overflow_pages
    }

    /// A cursor on `db` that the caller closes (``Cursor/close()``) before the transaction ends. Wraps `mdb_cursor_open`.
    func openCursor(_ db: Database) throws -> Cursor {
        var c: OpaquePointer?
        try check(mdb_cursor_open(handle, db.dbi, &c), "mdb_cursor_open(\(db.name))")
        return Cursor(handle: c!, db: db, file: file, isWrite: isWrite, pages: pages)
    }

    /// Runs `body` with a cursor on `db` and closes it afterwards. Wraps `mdb_cursor_open`/`mdb_cursor_close`.
    func withCursor<R>(_ db: Database, _ body: (inout Cursor) throws -> R) throws -> R {
        var c: OpaquePointer?
        try check(mdb_cursor_open(handle, db.dbi, &c), "mdb_cursor_open(\(db.name))")
        defer { mdb_cursor_close(c) }
        var cursor = Cursor(handle: c!, db: db, file: file, isWrite: isWrite, pages: pages)
        return try body(&cursor)
    }
}

/// A cursor (`MDB_cursor`) inside a ``Transaction``.
///
/// Every move first has the transaction's ``PageGuard`` check the pages liblmdb will read for it. In a read
/// transaction the cursor keeps where it stands in its leaf (the tree does not change), so a step inside a leaf costs
/// no check and a step out of it checks the neighbouring leaf once; in a write transaction every step looks from the
/// root again, since the cursor's own puts move entries between pages.
struct Cursor {
    let handle: OpaquePointer
    let db: Database
    let file: MappedFile
    let isWrite: Bool
    let pages: PageGuard?
    var key = UnsafeRawBufferPointer(start: nil, count: 0)
    var value = UnsafeRawBufferPointer(start: nil, count: 0)
    /// Entries of the current leaf before and after the cursor's entry, as the guard found them (read transactions;
    /// `nil` when not known).
    private var leafRoom: (before: Int, after: Int)? = nil
    /// The current leaf (read transactions, with ``leafRoom``): liblmdb seeks a key between its first and last keys
    /// in that leaf alone.
    private var leaf: PageGuard.Landing? = nil

    init(handle: OpaquePointer, db: Database, file: MappedFile, isWrite: Bool, pages: PageGuard?) {
        self.handle = handle
        self.db = db
        self.file = file
        self.isWrite = isWrite
        self.pages = pages
    }

    /// Moves with `op` and loads ``key``/``value``. Returns `false` at `MDB_NOTFOUND`. Wraps `mdb_cursor_get`.
    @inline(__always)
    private mutating func move(_ op: MDB_cursor_op, key input: UnsafeRawBufferPointer? = nil) throws -> Bool {
        var k = MDB_val(mv_size: input?.count ?? 0, mv_data: UnsafeMutableRawPointer(mutating: input?.baseAddress))
        var v = MDB_val()
        let rc = mdb_cursor_get(handle, &k, &v, op)
        if rc == MDB_NOTFOUND {
            leafRoom = nil
            return false
        }
        try check(rc, "mdb_cursor_get(\(db.name))")
        try file.check(v, db)
        key = UnsafeRawBufferPointer(start: k.mv_data, count: k.mv_size)
        value = UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size)
        if db.sealed { value = try SealedValue.open(value, key: key, db) }
        return true
    }

    /// Steps forward (`forward`) or back, having the guard check the pages the step reads first, and keeps
    /// ``leafRoom`` for the entry it reaches.
    @inline(__always)
    private mutating func step(forward: Bool) throws -> Bool {
        let op = forward ? MDB_NEXT : MDB_PREV
        guard let pages else { return try move(op) }
        if !isWrite, let room = leafRoom, forward ? room.after > 0 : room.before > 0 {
            leafRoom = forward ? (room.before + 1, room.after - 1) : (room.before - 1, room.after + 1)
            return try move(op)
        }
        return try stepSlow(pages, op, forward: forward)
    }

    /// A step out of the leaf, or with no leaf known: the guard's look from the root finds where it lands.
    private mutating func stepSlow(_ pages: PageGuard, _ op: MDB_cursor_op, forward: Bool) throws -> Bool {
        leafRoom = nil
        guard key.baseAddress != nil else {
            // Not positioned: liblmdb steps to the first (last) entry.
            try pages.edge(db, last: !forward)
            return try settle(try move(op))
        }
        let landing = try pages.step(db, from: key, forward: forward)
        guard try move(op) else { return false }
        // Where the guard's look says the step lands, checked against the key liblmdb gives: no second search.
        if !isWrite, let landing, PageGuard.compare(landing.leaf.checkedKey(landing.index), key) == 0 {
            land(landing, at: landing.index)
            return true
        }
        return try settle(true)
    }

    /// Records where the cursor stands after a move to ``key`` (read transactions).
    @inline(__always)
    private mutating func settle(_ moved: Bool) throws -> Bool {
        guard moved, !isWrite, leafRoom == nil, let pages else { return moved }
        if let landing = try pages.search(db, key: key, reach: .leaf) { land(landing, at: landing.index) }
        return moved
    }

    @inline(__always)
    private mutating func land(_ landing: PageGuard.Landing, at index: Int) {
        leafRoom = (index, landing.count - 1 - index)
        leaf = landing
    }

    /// Deletes the entry under the cursor. Wraps `mdb_cursor_del`.
    mutating func delete() throws {
        // A leaf left too small is merged with a neighbour.
        if key.baseAddress != nil { try pages?.search(db, key: key, reach: .both) }
        leafRoom = nil
        try check(mdb_cursor_del(handle, 0), "mdb_cursor_del(\(db.name))")
    }

    /// Closes a cursor from ``Transaction/openCursor(_:)``. Wraps `mdb_cursor_close`.
    func close() { mdb_cursor_close(handle) }

    /// Positions at the first key `>= key` (`MDB_SET_RANGE`).
    @inline(__always) mutating func seek(_ key: UnsafeRawBufferPointer) throws -> Bool {
        // liblmdb seeks a key between the current leaf's first and last keys in that leaf, checked already.
        if !isWrite, leafRoom != nil, let leaf, leaf.holds(key) {
            leafRoom = nil
            guard try move(MDB_SET_RANGE, key: key) else { return false }
            land(leaf, at: leaf.index(of: self.key))
            return true
        }
        leafRoom = nil
        let landing = try pages?.search(db, key: key, reach: .after)
        let moved = try move(MDB_SET_RANGE, key: key)
        // Landed in the leaf the guard found, at the first entry at or after the key: no second search.
        if moved, !isWrite, let landing, landing.index < landing.count {
            land(landing, at: landing.index)
            return true
        }
        return try settle(moved)
    }
    @inline(__always) mutating func first() throws -> Bool {
        leafRoom = nil
        try pages?.edge(db, last: false)
        return try settle(try move(MDB_FIRST))
    }
    @inline(__always) mutating func last() throws -> Bool {
        leafRoom = nil
        try pages?.edge(db, last: true)
        return try settle(try move(MDB_LAST))
    }
    @inline(__always) mutating func next() throws -> Bool { try step(forward: true) }
    @inline(__always) mutating func previous() throws -> Bool { try step(forward: false) }

    /// Positions at the last key `< bound`: `MDB_SET_RANGE`, then one step back, or the last entry of all
    /// when nothing is at or after `bound`. `false` when no key is below it.
    @inline(__always) mutating func last(below bound: UnsafeRawBufferPointer) throws -> Bool {
        try seek(bound) ? try previous() : try last()
    }

    /// Stores a pair through the cursor (`mdb_cursor_put`); `false` on `MDB_KEYEXIST`.
    @inline(__always) @discardableResult
    mutating func put(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer, flags: UInt32 = 0) throws
        -> Bool
    {
        leafRoom = nil
        if db.sealed {
            return try SealedValue.withSealed(value, key: key) { sealed in
                var plain = Cursor(
                    handle: handle, db: Database(dbi: db.dbi, name: db.name), file: file, isWrite: isWrite,
                    pages: pages)
                return try plain.put(key, sealed, flags: flags)
            }
        }
        if flags & PutFlags.append != 0 {
            try pages?.edge(db, last: true)
        } else if flags & PutFlags.current == 0 {
            try pages?.search(db, key: key, reach: .after)
        }
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var v = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
        let rc = mdb_cursor_put(handle, &k, &v, flags)
        if rc == MDB_KEYEXIST { return false }
        try check(rc, "mdb_cursor_put(\(db.name))")
        return true
    }
}

/// The data file's place in the memory map, taken when a transaction begins, to check the values LMDB hands out.
///
/// LMDB follows page numbers from the file without checking them against its size: a damaged node can point a
/// value (an overflow page) past the end of the file, and reading it is a bus error (`check` died on such a
/// store). Every value a read returns inside the map must end within the file; a value outside
/// the map is one a write transaction holds in its own dirty pages. The pages LMDB reads itself on the way
/// (branch and leaf pages) are checked before each call by the transaction's ``PageGuard``.
struct MappedFile {
    let mapStart: UInt
    let mapEnd: UInt
    let fileEnd: UInt
    /// data.mdb's descriptor, to look at its size again before calling a value damaged, and to read blocks with
    /// `pread` (``Snapshot/forEachBlockRun(onboarding:screens:time:_:)``).
    let descriptor: Int32
    /// What the process did with each window of the map (`nil` when the map's address is not known).
    let windows: MapWindows?
    /// Whether the store reads LMDB's pages of the file itself (``LeafWalk``, the page check): the linked liblmdb's
    /// layout is known (``PageLayout``) and the store's options allow it.
    let readsPages: Bool

    /// Throws ``StoreError/Kind/corrupt`` when `value` lies in the map and runs past the end of the file.
    ///
    /// The file may have grown since the transaction began: a write transaction that dirties more pages than
    /// LMDB keeps in memory writes some of them early ("spills" them) and reads them back from the map (a write of
    /// about 150 000 overflow values met such a page). So a value past the size taken
    /// at the start is checked against the file's size now before it is called damaged.
    @inline(__always)
    func check(_ value: MDB_val, _ db: Database) throws {
        let start = UInt(bitPattern: value.mv_data)
        guard start >= mapStart, start < mapEnd else { return }
        let (end, overflow) = start.addingReportingOverflow(UInt(value.mv_size))
        if overflow || end > fileEnd { try recheck(end: overflow ? .max : end, value, db) }
    }

    private func recheck(end: UInt, _ value: MDB_val, _ db: Database) throws {
        var st = stat()
        let size = fstat(descriptor, &st) == 0 ? UInt(st.st_size) : fileEnd - mapStart
        if end <= mapStart &+ size { return }
        throw StoreError(
            .corrupt,
            "a value of \(db.name) (\(value.mv_size) bytes at offset \(UInt(bitPattern: value.mv_data) - mapStart)) "
                + "lies past the end of data.mdb (\(size) bytes): the store is damaged")
    }
}

/// LMDB put flags, without exposing the C module.
enum PutFlags {
    static let noOverwrite = UInt32(MDB_NOOVERWRITE)
    static let append = UInt32(MDB_APPEND)
    /// Replace the value at the cursor's position (the key must be the one there): no second tree search.
    static let current = UInt32(MDB_CURRENT)
}

/// LMDB environment flags, without exposing the C module.
enum EnvFlags {
    static let noSync = UInt32(MDB_NOSYNC)
    static let noMetaSync = UInt32(MDB_NOMETASYNC)
}

extension Transaction {
    /// The environment's page size (`mdb_env_stat` through `mdb_txn_env`).
    var pageSize: Int {
        var stat = MDB_stat()
        mdb_env_stat(mdb_txn_env(handle), &stat)
        return Int(stat.ms_psize)
    }
}
