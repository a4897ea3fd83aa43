/// One of LMDB's branch or leaf pages as it lies in the file (the layout of ``PageLayout``), with every offset checked
/// against the page before it is used: what ``LeafWalk`` reads entries through and what the page check
/// (``Transaction/checkPages(limit:mainOnly:trees:)``) verifies, so that both hold a page to the same rules.
///
/// A page begins with a 16-byte header: its number (8), pad (2), flags (2), the lower and upper bounds of its free
/// space (2 + 2). The 2-byte offsets of its nodes follow (`lower − 16` bytes); the nodes lie from `upper` to the
/// page's end, each a 2 + 2-byte data size (on a branch page: the child's page number, with the flags' 2 bytes as its
/// top), flags (2), key size (2), the key, and on a leaf page the data or an 8-byte overflow page number.
struct LMDBPage {
    /// Page flags (`P_BRANCH`, `P_LEAF`, `P_OVERFLOW`) and leaf node flags (`F_BIGDATA`, `F_SUBDATA`).
    static let branchFlag: UInt16 = 0x01, leafFlag: UInt16 = 0x02, overflowFlag: UInt16 = 0x04
    static let bigData: UInt16 = 0x01, subData: UInt16 = 0x02

    /// The page's bytes, `pageSize` of them.
    let bytes: UnsafeRawBufferPointer
    let number: UInt64
    let isLeaf: Bool
    /// The end of the node offsets and the start of the nodes.
    let lower: Int
    let upper: Int

    /// The page's nodes.
    var count: Int { (lower - 16) / 2 }

    /// One node: where it starts in the page, its data size (or a branch node's child page), flags and key.
    struct Node {
        let at: Int
        /// The data size of a leaf node; the low 32 bits of a branch node's child page number.
        let size: Int
        let flags: UInt16
        let key: UnsafeRawBufferPointer
        /// Where a leaf node's data starts in the page (after its key).
        var dataAt: Int { at + 8 + key.count }
        /// A branch node's child page number.
        var child: UInt64 { UInt64(size) | UInt64(flags) << 32 }
    }

    /// The page `number` in `bytes`, checked: it says it is page `number`, its flags make it a leaf (`isLeaf`) or a
    /// branch, and its free space lies inside it.
    /// - Throws: ``PageFault`` naming the page and what is wrong.
    init(_ bytes: UnsafeRawBufferPointer, number: UInt64, isLeaf: Bool) throws(PageFault) {
        let said = bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self)
        guard said == number else { throw PageFault("page \(number) says it is page \(said)") }
        let flags = bytes.loadUnaligned(fromByteOffset: 10, as: UInt16.self)
        guard flags & 0x7F == (isLeaf ? LMDBPage.leafFlag : LMDBPage.branchFlag) else {
            let kind = isLeaf ? "leaf" : "branch"
            throw PageFault("page \(number) has flags 0x\(String(flags, radix: 16)), not a \(kind)")
        }
        let lower = Int(bytes.loadUnaligned(fromByteOffset: 12, as: UInt16.self))
        let upper = Int(bytes.loadUnaligned(fromByteOffset: 14, as: UInt16.self))
        guard lower > 16, lower <= upper, upper <= bytes.count, lower % 2 == 0 else {
            throw PageFault(
                "page \(number) has free space \(lower)…\(upper), impossible in a page of \(bytes.count) bytes")
        }
        self.bytes = bytes
        self.number = number
        self.isLeaf = isLeaf
        self.lower = lower
        self.upper = upper
    }

    /// Node `i` (below ``count``), checked to lie among the page's nodes with its header and its key.
    /// - Throws: ``PageFault`` naming the page and the node.
    func node(_ i: Int) throws(PageFault) -> Node {
        let at = Int(bytes.loadUnaligned(fromByteOffset: 16 + 2 * i, as: UInt16.self))
        guard at >= upper, at + 8 <= bytes.count else {
            throw PageFault(
                "page \(number), node \(i) at \(at) lies outside the page's nodes (\(upper)…\(bytes.count))")
        }
        let lo = Int(bytes.loadUnaligned(fromByteOffset: at, as: UInt16.self))
        let hi = Int(bytes.loadUnaligned(fromByteOffset: at + 2, as: UInt16.self))
        let flags = bytes.loadUnaligned(fromByteOffset: at + 4, as: UInt16.self)
        let keySize = Int(bytes.loadUnaligned(fromByteOffset: at + 6, as: UInt16.self))
        guard at + 8 + keySize <= bytes.count else {
            throw PageFault("page \(number), node \(i): a key of \(keySize) bytes runs past the page")
        }
        return Node(
            at: at, size: lo | hi << 16, flags: flags,
            key: UnsafeRawBufferPointer(rebasing: bytes[(at + 8)..<(at + 8 + keySize)]))
    }

    /// The data of leaf node `node` (`i` is its index, for messages), stored in the page (its flags 0).
    /// - Throws: ``PageFault`` when the data runs past the page.
    func inlineData(_ node: Node, _ i: Int) throws(PageFault) -> UnsafeRawBufferPointer {
        guard node.dataAt + node.size <= bytes.count else {
            throw PageFault("page \(number), node \(i): \(node.size) bytes of data run past the page")
        }
        return UnsafeRawBufferPointer(rebasing: bytes[node.dataAt..<(node.dataAt + node.size)])
    }

    /// The first overflow page of leaf node `node` (flag ``bigData``), whose data lies on overflow pages.
    /// - Throws: ``PageFault`` when the page number runs past the page.
    func overflowPage(_ node: Node, _ i: Int) throws(PageFault) -> UInt64 {
        guard node.dataAt + 8 <= bytes.count else {
            throw PageFault("page \(number), node \(i): its overflow page number runs past the page")
        }
        return bytes.loadUnaligned(fromByteOffset: node.dataAt, as: UInt64.self)
    }
}

/// What is wrong with a page of the file, in words that name the page (and the node).
struct PageFault: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
