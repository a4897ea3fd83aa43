import BoardwalkCodec
import BoardwalkModel
internal import CLMDB
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension Transaction {
    func getUInt64(_ db: Database, _ key: String) throws -> UInt64? {
        try key.withUTF8Bytes { k in
            guard let v = try get(db, k) else { return nil }
            guard v.count == 8 else { throw StoreError(.corrupt, "\(db.name)/\(key) is \(v.count) bytes, not 8") }
            return v.be64(0)
        }
    }

    func getUInt32(_ db: Database, _ key: String) throws -> UInt32? {
        try key.withUTF8Bytes { k in
            guard let v = try get(db, k) else { return nil }
            guard v.count == 4 else { throw StoreError(.corrupt, "\(db.name)/\(key) is \(v.count) bytes, not 4") }
            return v.be32(0)
        }
    }

    func putUInt64(_ db: Database, _ key: String, _ value: UInt64) throws {
        var be = value.bigEndian
        try key.withUTF8Bytes { k in try withUnsafeBytes(of: &be) { v in try put(db, k, v) } }
    }

    func putUInt32(_ db: Database, _ key: String, _ value: UInt32) throws {
        var be = value.bigEndian
        try key.withUTF8Bytes { k in try withUnsafeBytes(of: &be) { v in try put(db, k, v) } }
    }
}
