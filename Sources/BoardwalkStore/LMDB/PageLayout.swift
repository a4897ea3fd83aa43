internal import CLMDB

/// Which liblmdb this process runs with, and whether its on-disk page layout is the one ``LeafWalk`` and
/// ``Transaction/checkPages(limit:mainOnly:trees:)`` read from the file themselves.
///
/// Both were written against liblmdb 0.9.24 (Debian's) and accept any 0.9.x: every 0.9 release writes the same
/// pages (lmdb.h's data format version 1, which liblmdb checks at open), and the layout is private to liblmdb, so a
/// later major or minor version may change it without notice. On such a version the store reads through liblmdb's
/// cursors only (as it does where the map's address is unknown), and the page check is skipped: a cursor over
/// damaged pages may then crash inside liblmdb, as any LMDB tool does.
enum PageLayout {
    /// `mdb_version()` of the linked library.
    static let linkedVersion: (major: Int32, minor: Int32, patch: Int32) = {
        var major: Int32 = 0, minor: Int32 = 0, patch: Int32 = 0
        _ = mdb_version(&major, &minor, &patch)
        return (major, minor, patch)
    }()

    /// Whether the page readers know the layout of liblmdb `major`.`minor`: 0.9.
    static func isKnown(major: Int32, minor: Int32) -> Bool { major == 0 && minor == 9 }

    /// Whether the page readers know the linked library's layout.
    static var linkedIsKnown: Bool { isKnown(major: linkedVersion.major, minor: linkedVersion.minor) }
}
