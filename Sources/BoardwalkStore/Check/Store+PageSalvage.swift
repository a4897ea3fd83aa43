internal import CLMDB

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension Snapshot {
    /// ``Store/salvageEvents(_:damaged:)`` over LMDB pages that the page check found damaged: the trees of this
    /// snapshot's meta page read from the file (``PageLevelSalvage``), up to its last page.
    /// - Throws: ``PagesMoved`` when another process committed twice since the snapshot began; what the callbacks throw.
    func salvageFromPages(_ body: (StoredEvent) throws -> Bool, damaged: (SalvageDamage) throws -> Bool) throws
        -> SalvageSummary
    {
        guard let env = mdb_txn_env(txn.handle) else { throw StoreError(.corrupt, "no environment") }
        var fd: Int32 = -1
        try BoardwalkStore.check(mdb_env_get_fd(env, &fd), "mdb_env_get_fd")
        let pageSize = txn.pageSize
        let id = UInt64(mdb_txn_id(txn.handle))
        var meta: [UInt8]? = nil
        for slot in 0..<2 {
            var bytes = [UInt8](repeating: 0, count: pageSize)
            let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, pageSize, off_t(slot * pageSize)) }
            let transaction = bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 144, as: UInt64.self) }
            if n == pageSize && transaction == id { meta = bytes }
        }
        guard let meta else { throw PagesMoved(snapshot: id) }
        // Pages past the snapshot's last one belong to later commits.
        let lastPage = meta.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 136, as: UInt64.self) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw StoreError.system(errno, context: "fstat(data.mdb)") }
        let size = Int(min(UInt64(st.st_size), (min(lastPage, UInt64(Int.max) / 65536) + 1) * UInt64(pageSize)))
        let pages = DataFilePages(fd: fd, pageSize: pageSize, fileSize: size)
        return try PageLevelSalvage(file: pages, meta: meta).run(body, damaged: damaged)
    }
}

extension Store {
    /// Calls `body` with every event that can still be read from the data file of the store at `path`, read page by
    /// page without liblmdb, and `damaged` for what cannot: the salvage of a store that does not open, even from the
    /// other meta page (``openForSalvage(at:scratch:)``): a data file cut short, or both meta pages damaged.
    ///
    /// The trees are read from the newest meta page that is sound (LMDB's magic and version, its own number, a
    /// transaction id) and whose main database leads to `events`; pages past the end of the file are reported with
    /// what they held (``SalvageDamage/Extent/page(database:page:pastEnd:recoveredBlocks:)``), and the leaf pages no
    /// tree reached are read for the blocks below them. When the other meta page says it describes a later
    /// transaction (it is damaged, or its trees cannot be read), the leaf pages the trees do not reach are read for
    /// what that commit wrote, with no `next_seq` to bound them. With no sound meta page, every leaf page of the file
    /// is read that way. It is also what to read a store with when ``openForSalvage(at:scratch:)`` would read the
    /// commit before the latest. Events come as ``salvageEvents(_:damaged:)`` hands them out. Nothing is written; the file must not
    /// be written meanwhile (a store that does not open has no writer).
    /// - Returns: what was read; its ``SalvageSummary/note`` says which meta page, and where the file ends.
    /// - Throws: ``StoreError`` with ``StoreError/Kind/notAStore`` when there is no data file of two pages or more;
    ///   what the callbacks throw.
    /// - Complexity: O(pages of the file).
    @discardableResult
    public static func salvageEvents(
        inDataFileOf path: String, _ body: (StoredEvent) throws -> Bool, damaged: (SalvageDamage) throws -> Bool
    ) throws -> SalvageSummary {
        let dataPath = path + "/data.mdb"
        let fd = Glibc.open(dataPath, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw StoreError(.notAStore, "\(dataPath) cannot be opened: \(String(cString: strerror(errno)))")
        }
        defer { Glibc.close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_size >= 2 * metaPageSize else {
            throw StoreError(.notAStore, "\(dataPath) is shorter than LMDB's two meta pages")
        }
        let size = Int(st.st_size)
        // Meta pages that pass the checks needing no other page, newest first.
        var metas: [(slot: Int, bytes: [UInt8], transaction: UInt64)] = []
        // The transaction id each page says it describes, sound or not: a damaged newer page still tells that a
        // later commit wrote pages.
        var said: [Int: UInt64] = [:]
        for slot in 0..<2 {
            var bytes = [UInt8](repeating: 0, count: metaPageSize)
            let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, metaPageSize, off_t(slot * metaPageSize)) }
            guard n == metaPageSize else { continue }
            let page = MetaPage(
                slot: slot, bytes: bytes,
                transaction: bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 144, as: UInt64.self) })
            said[slot] = page.transaction
            // The last page is not checked against the file: a file cut short is what this reads.
            if page.isSound(filePages: .max) { metas.append((slot, bytes, page.transaction)) }
        }
        metas.sort { $0.transaction > $1.transaction }
        let pages = size / metaPageSize
        // Where the file ends against the latest commit's last page.
        let latestLast = metas.first?.bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 136, as: UInt64.self) }
        let cut =
            latestLast.map { $0 >= UInt64(pages) } == true
            ? "; the file was cut short: it holds pages 0…\(pages - 1), but the latest commit used pages up to "
                + "\(latestLast!), and what lay past the end is not read" : ""
        for meta in metas {
            var probe = DataFilePages(fd: fd, pageSize: metaPageSize, fileSize: size)
            var leadsToEvents = false
            let root = meta.bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 128, as: UInt64.self) }
            let depth = meta.bytes.withUnsafeBytes { Int($0.loadUnaligned(fromByteOffset: 94, as: UInt16.self)) }
            probe.walk("main database", root: root, depth: depth) { key, _, value in
                if value.count == 48 && key.elementsEqual(Layout.events.utf8) { leadsToEvents = true }
            }
            guard leadsToEvents else { continue }
            // A newer commit whose trees cannot be read (its meta page is damaged, or its main database lies past
            // the end or is damaged): the older one's trees, and the pages they do not reach for what it wrote.
            let otherSlot = 1 - meta.slot
            let otherSound = metas.contains { $0.slot == otherSlot }
            let newer = (said[otherSlot] ?? 0) > meta.transaction
            let other =
                !newer
                ? (otherSound ? "" : " (meta page \(otherSlot) is damaged)")
                : (otherSound
                    ? " (meta page \(otherSlot), transaction \(said[otherSlot]!), leads to no readable tree"
                    : " (meta page \(otherSlot), which says it describes transaction \(said[otherSlot]!), is damaged")
                    + "; what later commits wrote was looked for on the pages the older trees do not reach)"
            let file = DataFilePages(fd: fd, pageSize: metaPageSize, fileSize: size)
            var summary = try PageLevelSalvage(file: file, meta: meta.bytes, laterCommits: newer).run(
                body, damaged: damaged)
            summary.note =
                "\(dataPath) does not open; its pages were read directly, from meta page \(meta.slot) (transaction "
                + "\(meta.transaction))\(other)\(cut)"
            return summary
        }
        let file = DataFilePages(fd: fd, pageSize: metaPageSize, fileSize: size)
        var summary = try PageLevelSalvage(file: file, meta: nil).run(body, damaged: damaged)
        summary.note =
            "\(dataPath) does not open and neither meta page leads to its databases: every leaf page of the file was "
            + "read for blocks that pass their checksums\(cut)"
        return summary
    }
}
