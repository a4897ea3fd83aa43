#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reading a store whose meta page is damaged, for salvage.
///
/// LMDB keeps two meta pages and writes them in turn, so that the other one still describes the commit before when a
/// write of one is torn. But liblmdb refuses the whole file when either page's magic or version is wrong
/// (`MDB_INVALID`), and it follows the newer page's roots without checking them: four bad bytes in the *older* page
/// made every command refuse a store whose current state was intact. A salvage copy is the data file with each
/// sound meta page in turn written over both slots, newest first, until one opens and passes the page check at open.
extension Store {
    /// One of the two meta pages, as read from the file.
    struct MetaPage {
        /// Which page it is (0 or 1).
        var slot: Int
        var bytes: [UInt8]
        /// The transaction it describes (byte 144).
        var transaction: UInt64

        /// The checks that need no other page: its own number, the meta flag, LMDB's magic and version, a
        /// transaction id, and a last page inside the file. What they cannot see (a damaged root) the open finds.
        func isSound(filePages: UInt64) -> Bool {
            func u64(_ at: Int) -> UInt64 {
                bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: at, as: UInt64.self) }
            }
            func u32(_ at: Int) -> UInt32 {
                bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: at, as: UInt32.self) }
            }
            let flags = bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 10, as: UInt16.self) }
            let lastPage = u64(136)
            return u64(0) == UInt64(slot) && flags & 0x08 != 0 && u32(16) == 0xBEEF_C0DE && u32(20) == 1
                && transaction >= 1 && lastPage >= 1 && lastPage < filePages
        }
    }

    /// The size of LMDB's pages that this code reads meta pages with (the store's page size on this platform).
    static let metaPageSize = 4096

    /// Opens the store at `path` read-only for salvage; when its meta pages keep it from opening, opens a copy of
    /// its data file in `scratch` (an empty or new directory) from the newest sound meta page instead.
    ///
    /// - Returns: the store; `nil` or a sentence saying which meta page was damaged and which commit the copy reads;
    ///   and whether that commit is older than the file's latest (what the latest added is then not read). The
    ///   caller closes the store and removes `scratch`.
    /// - Throws: the open's ``StoreError`` when no meta page opens the store either, or when the file is cut short
    ///   under the latest commit (``salvageEvents(inDataFileOf:_:damaged:)`` reads such a file);
    ///   ``StoreError/Kind/system`` when the copy cannot be made (the copy takes as much space as `data.mdb`).
    /// - Complexity: O(1) for a store that opens; else one copy of the data file per meta page tried (at most two).
    public static func openForSalvage(
        at path: String, scratch: String
    ) throws -> (store: Store, note: String?, readsAnOlderCommit: Bool) {
        var options = Options()
        options.readOnly = true
        let failure: StoreError
        do {
            return (try Store.open(at: path, options: options), nil, false)
        } catch let error as StoreError where error.kind == .notAStore || error.kind == .corrupt {
            failure = error
        }
        let dataPath = path + "/data.mdb"
        let descriptor = Glibc.open(dataPath, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure }
        defer { Glibc.close(descriptor) }
        var st = stat()
        guard fstat(descriptor, &st) == 0, st.st_size >= 2 * metaPageSize else { throw failure }
        let filePages = UInt64(st.st_size) / UInt64(metaPageSize)
        var metas: [MetaPage] = []
        for slot in 0..<2 {
            var bytes = [UInt8](repeating: 0, count: metaPageSize)
            let n = bytes.withUnsafeMutableBytes {
                pread(descriptor, $0.baseAddress, metaPageSize, off_t(slot * metaPageSize))
            }
            guard n == metaPageSize else { continue }
            let transaction = bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 144, as: UInt64.self) }
            metas.append(MetaPage(slot: slot, bytes: bytes, transaction: transaction))
        }
        let sound = metas.filter { $0.isSound(filePages: filePages) }.sorted { $0.transaction > $1.transaction }
        let newest = metas.map(\.transaction).max() ?? 0
        // A file cut short under its latest commit: a copy from the older meta page would read neither what the
        // latest commit added nor its pages still in the file. The caller reads the pages directly instead
        // (``salvageEvents(inDataFileOf:_:damaged:)``).
        if let latest = metas.filter({ $0.isSound(filePages: .max) }).max(by: { $0.transaction < $1.transaction }),
            latest.bytes.withUnsafeBytes({ $0.loadUnaligned(fromByteOffset: 136, as: UInt64.self) }) >= filePages
        {
            throw failure
        }
        try makeDirectory(scratch)
        for meta in sound {
            try writeCopy(from: descriptor, size: Int(st.st_size), to: scratch + "/data.mdb", metaFrom: meta)
            do {
                let store = try Store.open(at: scratch, options: options)
                let other = 1 - meta.slot
                let note =
                    meta.transaction >= newest
                    ? "meta page \(other) of \(path)/data.mdb is damaged; read from meta page \(meta.slot), which "
                        + "describes the latest commit (transaction \(meta.transaction))"
                    : "the latest meta page of \(path)/data.mdb (page \(other)) leads to damage; read from meta page "
                        + "\(meta.slot) instead, as of the commit before (transaction \(meta.transaction)): what the "
                        + "last commit added is not read"
                return (store, note, meta.transaction < newest)
            } catch let error as StoreError where error.kind == .notAStore || error.kind == .corrupt {
                unlink(scratch + "/data.mdb")
                unlink(scratch + "/lock.mdb")
            }
        }
        throw StoreError(
            failure.kind,
            "\(failure.message); neither meta page opens it (\(sound.count) of 2 look sound)",
            underlying: failure.underlying)
    }

    /// Copies the data file to `target`, with `meta` in its own slot and, with a transaction id one lower, in the
    /// other: liblmdb then reads the store from `meta`.
    private static func writeCopy(from descriptor: Int32, size: Int, to target: String, metaFrom meta: MetaPage) throws
    {
        let out = Glibc.open(target, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard out >= 0 else { throw StoreError.system(errno, context: "cannot create \(target)") }
        defer { Glibc.close(out) }
        let chunk = 1 << 20
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: chunk, alignment: 16)
        defer { buffer.deallocate() }
        var offset = 0
        while offset < size {
            let n = pread(descriptor, buffer, min(chunk, size - offset), off_t(offset))
            guard n > 0 else { throw StoreError.system(errno, context: "cannot read the data file at byte \(offset)") }
            guard Glibc.write(out, buffer, n) == n else {
                throw StoreError.system(errno, context: "cannot write \(target)")
            }
            offset += n
        }
        for slot in 0..<2 {
            var page = meta.bytes
            page.withUnsafeMutableBytes { p in
                p.storeBytes(of: UInt64(slot), toByteOffset: 0, as: UInt64.self)
                if slot != meta.slot { p.storeBytes(of: meta.transaction - 1, toByteOffset: 144, as: UInt64.self) }
            }
            let written = page.withUnsafeBytes { pwrite(out, $0.baseAddress, metaPageSize, off_t(slot * metaPageSize)) }
            guard written == metaPageSize else { throw StoreError.system(errno, context: "cannot write \(target)") }
        }
    }
}
