import Foundation

/// The trees of a store's `data.mdb` as LMDB 0.9 lays them out (4 KiB pages), read from its bytes: which pages are
/// the meta, branch and leaf pages of which named database, so that a test can damage one it chooses.
struct LMDBFileMap {
    static let pageSize = 4096

    /// One named database: its root page and depth from its record in the main database.
    struct Tree {
        var name: String
        var root: Int
        var depth: Int
    }

    let data: Data
    /// The meta page of the last commit (0 or 1).
    let currentMeta: Int
    /// The named databases.
    let trees: [Tree]

    init(_ data: Data) {
        self.data = data
        let txn0 = Self.u64(data, 144), txn1 = Self.u64(data, Self.pageSize + 144)
        currentMeta = txn1 > txn0 ? 1 : 0
        let meta = currentMeta * Self.pageSize
        let mainRoot = Int(Self.u64(data, meta + 128))
        var trees: [Tree] = []
        // The main database of a Boardwalk store fits one leaf page.
        for node in Self.nodes(data, page: mainRoot) where Self.u16(data, node + 4) == 0x02 {
            let keySize = Int(Self.u16(data, node + 6))
            let name = String(decoding: data[(node + 8)..<(node + 8 + keySize)], as: UTF8.self)
            let record = node + 8 + keySize
            trees.append(
                Tree(
                    name: name, root: Int(truncatingIfNeeded: Self.u64(data, record + 40)),
                    depth: Int(Self.u16(data, record + 6))))
        }
        self.trees = trees
    }

    func tree(_ name: String) -> Tree? { trees.first { $0.name == name } }

    /// The pages of `tree` at `level` (1 is the root), in key order.
    func pages(_ tree: Tree, level: Int) -> [Int] {
        guard tree.root >= 0, tree.depth >= level else { return [] }
        var pages = [tree.root]
        for _ in 1..<level {
            pages = pages.flatMap { page in Self.nodes(data, page: page).map { Int(child(atNode: $0)) } }
        }
        return pages
    }

    /// The leaves of `tree`, in key order.
    func leaves(_ tree: Tree) -> [Int] { pages(tree, level: tree.depth) }

    /// The keys of leaf (or branch) page `page`.
    func keys(_ page: Int) -> [Data] {
        Self.nodes(data, page: page).map { node in
            let keySize = Int(Self.u16(data, node + 6))
            return data[(node + 8)..<(node + 8 + keySize)]
        }
    }

    private func child(atNode node: Int) -> UInt64 {
        UInt64(Self.u16(data, node)) | UInt64(Self.u16(data, node + 2)) << 16 | UInt64(Self.u16(data, node + 4)) << 32
    }

    /// The byte offsets in `data` of the nodes of page `page`.
    static func nodes(_ data: Data, page: Int) -> [Int] {
        let at = page * pageSize
        let lower = Int(u16(data, at + 12))
        return (0..<max(0, (lower - 16) / 2)).map { at + Int(u16(data, at + 16 + 2 * $0)) }
    }

    static func u16(_ data: Data, _ at: Int) -> UInt16 {
        UInt16(data[data.startIndex + at]) | UInt16(data[data.startIndex + at + 1]) << 8
    }

    static func u64(_ data: Data, _ at: Int) -> UInt64 {
        (0..<8).reduce(UInt64(0)) { $0 | UInt64(data[data.startIndex + at + $1]) << (8 * UInt64($1)) }
    }
}
