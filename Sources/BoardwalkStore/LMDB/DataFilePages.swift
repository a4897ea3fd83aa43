#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// LMDB's trees read from a data file page by page with `pread`, going on past what is damaged: the reader of a
/// salvage (``PageLevelSalvage``). liblmdb trusts its pages and asserts or reads out of bounds on a damaged one, and
/// refuses a file cut short; this reads whatever pages are whole and sound, and lists the others.
///
/// A tree is walked from its root: a page that cannot be read (past the end of the file), or that fails the checks
/// ``LMDBPage`` makes (its own number, its kind at its level, its bounds, its nodes), is listed in ``lost`` with the
/// range of keys it stood for (the keys of its parent's nodes around it), and the walk goes on to its siblings. A
/// value on overflow pages is read when the run says its own number, is an overflow run and fits the file;
/// otherwise the run is listed with the one key whose value it held. Every page a walk reads is marked, so that
/// ``scanUnreachedLeaves(_:)`` can read the leaf pages no walk reached: those below a lost branch page, and pages a
/// copy-on-write commit freed.
///
/// The layout is LMDB 0.9's (PageCheck.swift describes it).
struct DataFilePages {
    /// How a walk reached a page it could not read.
    enum PageKind: String {
        case branch, leaf, overflow
    }

    /// A page that a walk could not read, and what was below it.
    struct LostPage {
        var database: String
        var page: UInt64
        var kind: PageKind
        /// The keys the page stood for: from `lower` (nil: the tree's first) up to `upper` (excluded; nil: to the
        /// tree's end). For an overflow run, both are the key of the one value it held.
        var lower: [UInt8]?
        var upper: [UInt8]?
        /// The page lies past the end of the file, which was cut short.
        var pastEnd: Bool
        var reason: String
    }

    let fd: Int32
    let pageSize: Int
    /// Whole pages in the file.
    let pages: UInt64
    /// Pages the walks read (tree pages and overflow runs), one bit each.
    private(set) var reached: [UInt64]
    private(set) var lost: [LostPage] = []

    init(fd: Int32, pageSize: Int, fileSize: Int) {
        self.fd = fd
        self.pageSize = pageSize
        pages = UInt64(max(0, fileSize) / pageSize)
        reached = [UInt64](repeating: 0, count: Int(pages / 64) + 1)
    }

    func wasReached(_ page: UInt64) -> Bool {
        page < pages && reached[Int(page / 64)] & (1 << (page % 64)) != 0
    }

    /// Marks `page` reached; `false` when it already was (a damaged pointer that leads back into a tree).
    private mutating func mark(_ page: UInt64) -> Bool {
        guard page < pages else { return true }
        let (word, bit) = (Int(page / 64), page % 64)
        if reached[word] & (1 << bit) != 0 { return false }
        reached[word] |= 1 << bit
        return true
    }

    /// Reads page `page` into `buffer` (`pageSize` bytes); `false` when it is not whole in the file.
    func read(_ page: UInt64, into buffer: UnsafeMutableRawBufferPointer) -> Bool {
        guard page < pages else { return false }
        return read(offset: Int(page) * pageSize, into: buffer)
    }

    /// Reads `buffer.count` bytes at `offset`; `false` when the file ends before them or a read fails.
    func read(offset: Int, into buffer: UnsafeMutableRawBufferPointer) -> Bool {
        var done = 0
        while done < buffer.count {
            let n = pread(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset + done))
            if n > 0 {
                done += n
            } else if n < 0 && errno == EINTR {
                continue
            } else {
                return false
            }
        }
        return true
    }

    /// Where a value on overflow pages lies: the byte offset of its first byte, after the run's 16-byte header.
    /// `nil` and why when the run is not one (another number, another kind of page, a count that does not fit the
    /// file or the value).
    func overflowValue(first: UInt64, size: Int) -> (offset: Int?, pastEnd: Bool, reason: String) {
        let header = UnsafeMutableRawBufferPointer.allocate(byteCount: 16, alignment: 8)
        defer { header.deallocate() }
        guard first >= 2, first < pages, read(offset: Int(first) * pageSize, into: header) else {
            return (nil, first >= pages, "its overflow page \(first) lies outside the file's \(pages) pages")
        }
        let said = header.loadUnaligned(fromByteOffset: 0, as: UInt64.self)
        let flags = header.loadUnaligned(fromByteOffset: 10, as: UInt16.self)
        let count = UInt64(header.loadUnaligned(fromByteOffset: 12, as: UInt32.self))
        guard said == first else { return (nil, false, "overflow page \(first) says it is page \(said)") }
        guard flags & 0x7F == LMDBPage.overflowFlag else {
            return (nil, false, "page \(first) has flags 0x\(String(flags, radix: 16)), not an overflow page")
        }
        guard count >= 1, UInt64(size) + 16 <= count * UInt64(pageSize) else {
            return (
                nil, false, "overflow page \(first) begins a run of \(count) pages, which cannot hold \(size) bytes"
            )
        }
        // The count checked against the file before any page past the first is read.
        guard first + count <= pages else {
            return (nil, true, "the overflow run of pages \(first)…\(first + count - 1) runs past the end of the file")
        }
        return (Int(first) * pageSize + 16, false, "")
    }

    /// Walks the tree of `database` from `root` (depth `depth`, from its record), calling `entry` with each leaf
    /// node's key, flags and value in key order (an overflow value read into memory). A page or run that cannot be
    /// read is added to ``lost`` and skipped.
    mutating func walk(
        _ database: String, root: UInt64, depth: Int,
        _ entry: (_ key: UnsafeRawBufferPointer, _ flags: UInt16, _ value: UnsafeRawBufferPointer) throws -> Void
    ) rethrows {
        guard root != .max else { return }  // an empty database
        guard depth >= 1, depth <= 32 else {
            lost.append(
                LostPage(
                    database: database, page: root, kind: .branch, lower: nil, upper: nil, pastEnd: false,
                    reason: "its record says depth \(depth)"))
            return
        }
        try visit(database, root, level: 1, depth: depth, lower: nil, upper: nil, entry)
    }

    private mutating func visit(
        _ database: String, _ page: UInt64, level: Int, depth: Int, lower: [UInt8]?, upper: [UInt8]?,
        _ entry: (UnsafeRawBufferPointer, UInt16, UnsafeRawBufferPointer) throws -> Void
    ) rethrows {
        let isLeaf = level == depth
        func lose(_ reason: String, pastEnd: Bool = false) {
            lost.append(
                LostPage(
                    database: database, page: page, kind: isLeaf ? .leaf : .branch, lower: lower, upper: upper,
                    pastEnd: pastEnd, reason: reason))
        }
        guard page >= 2 else { return lose("a page number of \(page), a meta page") }
        guard page < pages else {
            return lose("page \(page) lies past the end of the file (\(pages) pages)", pastEnd: true)
        }
        guard mark(page) else { return lose("page \(page) is reached twice") }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: pageSize, alignment: 16)
        defer { buffer.deallocate() }
        guard read(page, into: buffer) else { return lose("page \(page) cannot be read") }
        let view: LMDBPage
        do {
            view = try LMDBPage(UnsafeRawBufferPointer(buffer), number: page, isLeaf: isLeaf)
        } catch {
            return lose(error.description)
        }
        if !isLeaf {
            // Every child's range first (the buffer holds this page only until the children are visited).
            var children: [(page: UInt64?, key: [UInt8]?, fault: String?)] = []
            for i in 0..<view.count {
                do {
                    let node = try view.node(i)
                    // Node 0's key stands for everything before node 1: its range starts at the parent's.
                    children.append((node.child, i == 0 ? lower : Array(node.key), nil))
                } catch {
                    children.append((nil, nil, error.description))
                }
            }
            for (i, child) in children.enumerated() {
                // A child's keys end where the next readable node's begin.
                let next = children[(i + 1)...].first { $0.key != nil }?.key ?? upper
                let from = child.key ?? children[..<i].last { $0.key != nil }?.key ?? lower
                guard let childPage = child.page else {
                    lost.append(
                        LostPage(
                            database: database, page: page, kind: .branch, lower: from, upper: next, pastEnd: false,
                            reason: child.fault ?? ""))
                    continue
                }
                try visit(database, childPage, level: level + 1, depth: depth, lower: from, upper: next, entry)
            }
            return
        }
        for i in 0..<view.count {
            let node: LMDBPage.Node
            do { node = try view.node(i) } catch {
                lose(error.description)
                continue
            }
            switch node.flags {
            case LMDBPage.bigData:
                guard let first = try? view.overflowPage(node, i) else {
                    lose("page \(page), node \(i): its overflow page number runs past the page")
                    continue
                }
                let run = overflowValue(first: first, size: node.size)
                guard let offset = run.offset else {
                    lost.append(
                        LostPage(
                            database: database, page: first, kind: .overflow, lower: Array(node.key),
                            upper: Array(node.key), pastEnd: run.pastEnd, reason: run.reason))
                    continue
                }
                let count = (node.size + 16 + pageSize - 1) / pageSize
                for p in first..<(first + UInt64(count)) { _ = mark(p) }
                let value = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, node.size), alignment: 16)
                defer { value.deallocate() }
                let bytes = UnsafeMutableRawBufferPointer(rebasing: value[0..<node.size])
                guard read(offset: offset, into: bytes) else {
                    lost.append(
                        LostPage(
                            database: database, page: first, kind: .overflow, lower: Array(node.key),
                            upper: Array(node.key), pastEnd: true, reason: "overflow page \(first) cannot be read"))
                    continue
                }
                try entry(node.key, node.flags, UnsafeRawBufferPointer(bytes))
            case 0, LMDBPage.subData:
                guard let data = try? view.inlineData(node, i) else {
                    lose("page \(page), node \(i): \(node.size) bytes of data run past the page")
                    continue
                }
                try entry(node.key, node.flags, data)
            default:
                lose("page \(page), node \(i) has flags 0x\(String(node.flags, radix: 16)), which no tree here has")
            }
        }
    }

    /// Calls `entry` with every node of every leaf page that no walk reached and that passes the page checks (it
    /// says its own number, is a leaf, keeps its bounds), with the page's number, the node's key and where its value
    /// lies in the file (inline, or on an overflow run that checks). Values are not read: `entry` reads those it
    /// wants with ``read(offset:into:)``.
    /// - Complexity: one `pread` per page not reached, the whole file when nothing was.
    func scanUnreachedLeaves(
        _ entry: (_ page: UInt64, _ key: UnsafeRawBufferPointer, _ offset: Int, _ size: Int) throws -> Void
    ) rethrows {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: pageSize, alignment: 16)
        defer { buffer.deallocate() }
        var page: UInt64 = 2
        while page < pages {
            defer { page += 1 }
            guard !wasReached(page), read(page, into: buffer),
                buffer.loadUnaligned(fromByteOffset: 0, as: UInt64.self) == page,
                buffer.loadUnaligned(fromByteOffset: 10, as: UInt16.self) & 0x7F == LMDBPage.leafFlag,
                let view = try? LMDBPage(UnsafeRawBufferPointer(buffer), number: page, isLeaf: true)
            else { continue }
            for i in 0..<view.count {
                guard let node = try? view.node(i) else { continue }
                switch node.flags {
                case 0:
                    guard node.dataAt + node.size <= pageSize else { continue }
                    try entry(page, node.key, Int(page) * pageSize + node.dataAt, node.size)
                case LMDBPage.bigData:
                    guard let first = try? view.overflowPage(node, i),
                        let offset = overflowValue(first: first, size: node.size).offset
                    else { continue }
                    try entry(page, node.key, offset, node.size)
                default:
                    continue
                }
            }
        }
    }
}
