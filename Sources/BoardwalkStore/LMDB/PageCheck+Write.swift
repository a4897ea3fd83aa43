internal import CLMDB

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What ``Transaction/checkBeforeWrite(whole:limit:)`` found.
struct PreWriteCheck {
    /// Damage in the pages the writer relies on, each naming the database and page; empty when there is none.
    var problems: [String]
    /// What is wrong with the meta page of the commit before the last, which liblmdb does not read again (the next
    /// commit writes over it); `nil` when it is sound.
    var olderMeta: String?
}

extension Transaction {
    /// The cheap checks before a writer's first write, reading the file with `pread` as
    /// ``checkPages(limit:mainOnly:trees:)`` does, in a write transaction that has written nothing yet: both meta
    /// pages (the last commit's must be sound; the other one's damage is only noted, since liblmdb never reads it
    /// again and the next commit rewrites it), the free pages' tree and the main database whole, every named
    /// database's record, the trees named in `whole` whole (the logs and the dictionary, which the writer reads
    /// through), and of every other tree the path from its root down its last edge, where an append adds keys.
    /// Each page is held to the page check's rules. The pages of keys an append lands on elsewhere (a group's newest
    /// block in `events`, a bucket of `sessions`) are checked when the write reaches them (``PageGuard``).
    ///
    /// - Throws: ``StoreError`` when the file cannot be read.
    /// - Complexity: one `pread` per page of the free tree, the main database and the trees of `whole`, and per
    ///   level of every other tree.
    func checkBeforeWrite(whole: Set<String>, limit: Int = 10) throws -> PreWriteCheck {
        guard isWrite, file.readsPages, let env = mdb_txn_env(handle) else { return PreWriteCheck(problems: []) }
        var fd: Int32 = -1
        try check(mdb_env_get_fd(env, &fd), "mdb_env_get_fd")
        let pageSize = self.pageSize
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw StoreError.system(errno, context: "fstat(data.mdb)") }
        let filePages = UInt64(st.st_size) / UInt64(pageSize)
        let committed = UInt64(UInt(bitPattern: mdb_txn_id(handle))) &- 1
        let metas = (0..<2).map { _ in UnsafeMutableRawBufferPointer.allocate(byteCount: pageSize, alignment: 16) }
        defer { for m in metas { m.deallocate() } }
        var current: Int? = nil
        var readable = [false, false]
        for page in 0..<2 {
            readable[page] = pread(fd, metas[page].baseAddress, pageSize, off_t(page * pageSize)) == pageSize
            if readable[page], metas[page].loadUnaligned(fromByteOffset: 16, as: UInt32.self) == 0xBEEF_C0DE,
                metas[page].loadUnaligned(fromByteOffset: 144, as: UInt64.self) == committed
            {
                current = page
            }
        }
        guard let current else {
            return PreWriteCheck(problems: ["meta: neither meta page is the last commit's (\(committed))"])
        }
        let meta = metas[current]
        var result = PreWriteCheck(problems: [])
        let other = metas[1 - current]
        let otherLast = other.loadUnaligned(fromByteOffset: 136, as: UInt64.self)
        let otherMainRoot = other.loadUnaligned(fromByteOffset: 128, as: UInt64.self)
        if !readable[1 - current] || other.loadUnaligned(fromByteOffset: 16, as: UInt32.self) != 0xBEEF_C0DE
            || other.loadUnaligned(fromByteOffset: 20, as: UInt32.self) != 1
            || other.loadUnaligned(fromByteOffset: 144, as: UInt64.self) >= committed || otherLast >= filePages
            || (otherMainRoot != .max && otherMainRoot > otherLast)
        {
            result.olderMeta =
                "meta page \(1 - current), of the commit before the last, is damaged; liblmdb reads the last "
                + "commit's page \(current), and the next commit writes over the damaged one"
        }
        let lastPage = meta.loadUnaligned(fromByteOffset: 136, as: UInt64.self)
        guard lastPage >= 1, lastPage < filePages else {
            result.problems = ["meta: the last page used, \(lastPage), lies past the end of the file"]
            return result
        }
        var walk = PageWalk(fd: fd, pageSize: pageSize, lastPage: lastPage, limit: limit)
        defer { walk.buffer.deallocate() }
        walk.walk(
            TreeRecord(name: "free pages", UnsafeRawBufferPointer(rebasing: meta[40..<88])), isMain: false,
            isFree: true)
        walk.walk(TreeRecord(name: "main database", UnsafeRawBufferPointer(rebasing: meta[88..<136])), isMain: true)
        for tree in walk.named where !walk.full {
            if tree.pad != 0 || tree.flags != 0 {
                walk.report(
                    "\(tree.name): its record has flags 0x\(String(tree.flags, radix: 16)) and first field "
                        + "\(tree.pad); expected 0 and 0")
            } else if whole.contains(tree.name) {
                walk.walk(tree, isMain: false)
            } else {
                walk.lastEdge(tree)
            }
        }
        result.problems = walk.problems
        return result
    }
}

extension PageWalk {
    /// Checks the pages of `tree` from its root down its last nodes: each in the file, saying its own number, of its
    /// level's kind (a branch with at least two nodes), every node, child and value inside the page or the file.
    mutating func lastEdge(_ tree: TreeRecord) {
        guard tree.root != .max else { return }
        guard tree.depth >= 1, tree.depth <= 32 else {
            report("\(tree.name): depth \(tree.depth) is impossible")
            return
        }
        var page = tree.root
        for level in 1...tree.depth {
            let what = "\(tree.name), level \(level)"
            guard read(page, what) else { return }
            let isLeaf = level == tree.depth
            do {
                let view = try LMDBPage(UnsafeRawBufferPointer(buffer), number: page, isLeaf: isLeaf)
                if !isLeaf && view.count < 2 { throw PageFault("branch page \(page) has \(view.count) node(s)") }
                var last: UInt64 = 0
                for i in 0..<view.count {
                    let node = try view.node(i)
                    if !isLeaf {
                        guard node.child >= 2, node.child <= lastPage else {
                            throw PageFault("page \(page), node \(i) points to page \(node.child), outside the file")
                        }
                        last = node.child
                    } else if node.flags == 0 {
                        _ = try view.inlineData(node, i)
                    } else if node.flags == LMDBPage.bigData {
                        let first = try view.overflowPage(node, i)
                        let pagesNeeded = (UInt64(node.size) + 16 + UInt64(pageSize) - 1) / UInt64(pageSize)
                        guard first >= 2, first <= lastPage, pagesNeeded <= lastPage - first + 1 else {
                            throw PageFault(
                                "page \(page), node \(i): its value (\(node.size) bytes on page \(first)) lies "
                                    + "outside the file")
                        }
                    } else {
                        throw PageFault("page \(page), node \(i) has flags 0x\(String(node.flags, radix: 16))")
                    }
                }
                page = last
            } catch {
                report("\(what): \(error)")
                return
            }
        }
    }
}
