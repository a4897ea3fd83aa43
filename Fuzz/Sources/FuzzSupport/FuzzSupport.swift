import BoardwalkCodec
import BoardwalkModel

/// A fixed dictionary for the record fuzzer: 300 distinct strings (so references need one or two varint
/// bytes), none of them a UUID (a UUID event id would be re-encoded inline rather than as a reference).
public let fuzzStrings: [String] = (0..<300).map { i in i % 7 == 0 ? "é\(i)日本" : "s\(i)" }

/// Stops the process so libFuzzer records the input as a crash, with a message saying which oracle failed.
public func fuzzFailure(_ message: String) -> Never {
    fatalError("fuzz oracle failed: \(message)")
}

/// The full record of `event` encoded with a copy of `table` (so ids are assigned as in `table`).
public func reencodeRecord(_ event: Event, table: StringTable) -> [UInt8] {
    var strings = table
    var encoder = RecordEncoder()
    do {
        try encoder.appendRecord(event, strings: &strings)
    } catch {
        fuzzFailure("a decoded event failed to encode: \(error)")
    }
    return Array(encoder.bytes)
}

/// A copy of `bytes` with every block's CRC32C recomputed, so that mutations reach the block and record
/// parsers instead of stopping at the checksum (the unrepaired input exercises the checksum itself).
public func repairingChecksums(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
    var out = [UInt8](bytes)
    var position = BatchFormat.headerSize
    while position + BatchFormat.blockHeaderSize <= out.count {
        let length =
            Int(out[position + 1]) | Int(out[position + 2]) << 8 | Int(out[position + 3]) << 16
            | Int(out[position + 4]) << 24
        let payload = position + BatchFormat.blockHeaderSize
        guard length <= out.count - payload else { break }
        var crc = CRC32C()
        out.withUnsafeBytes { raw in
            crc.update(UnsafeRawBufferPointer(rebasing: raw[position..<(position + 9)]))
            crc.update(UnsafeRawBufferPointer(rebasing: raw[payload..<(payload + length)]))
        }
        let value = crc.value
        for k in 0..<4 { out[position + 9 + k] = UInt8(truncatingIfNeeded: value >> (8 * k)) }
        position = payload + length
    }
    return out
}
