import BoardwalkModel

/// Constants of the batch-file format (see `docs/codec.md`).
@usableFromInline
package enum BatchFormat {
    /// The first eight bytes of every batch file: `\x89BWK\r\n\x1A\n`. Like PNG's signature, the high byte
    /// and the line endings make text-mode transfers and truncated downloads fail loudly.
    package static let magic: [UInt8] = [0x89, 0x42, 0x57, 0x4B, 0x0D, 0x0A, 0x1A, 0x0A]
    /// The batch-file version this module writes and reads.
    package static let version: UInt8 = 1
    /// Bytes of the file header: magic, version, three zero bytes.
    package static let headerSize = 12
    /// Bytes of a block header: type, payload length (u32), item count (u32), CRC32C (u32).
    package static let blockHeaderSize = 13

    /// Block types.
    @inlinable static var blockStrings: UInt8 { 1 }
    @inlinable static var blockRecords: UInt8 { 2 }
    @inlinable static var blockEnd: UInt8 { 3 }

    /// The smallest possible full record: length, tag, flags, 8-byte time.
    @usableFromInline static let minRecordSize = 11
}

/// Writes a batch file: a self-contained sequence of events with its own string table, checksummed per block.
///
/// Events are encoded as full records into the current block; when the block reaches ``blockSize`` it is
/// finished (a strings block with the strings first seen in it, then the records block) and appended to
/// the output, which a caller streaming to disk drains with ``takeOutput()``. ``finish()`` closes the file
/// with its end block. Memory is the output not yet taken, one block, and the string table.
///
/// ```swift
/// var writer = BatchWriter()
/// for event in events { try writer.append(event) }
/// let file: [UInt8] = writer.finish()
/// ```
public struct BatchWriter: Sendable {
    /// The file's string table so far (ids are file-wide, in first-seen order).
    public private(set) var strings = StringTable()
    /// The target payload size of a records block.
    public let blockSize: Int
    var output: [UInt8]
    var records = RecordEncoder(capacity: 1 << 16)
    var recordsInBlock = 0
    var stringsWritten = 0
    var totalRecords: UInt64 = 0
    var finished = false

    /// A writer whose records blocks hold about `blockSize` bytes (64 KiB by default): large enough that
    /// block overhead is noise, small enough that a reader streams in small steps and corruption loses little.
    public init(blockSize: Int = 1 << 16) {
        self.blockSize = Swift.max(blockSize, 64)
        output = BatchFormat.magic + [BatchFormat.version, 0, 0, 0]
    }

    /// The number of events appended so far.
    public var eventCount: UInt64 { totalRecords }

    /// Appends an event.
    /// - Throws: ``EncodingError`` for an event outside the model's domain (see ``RecordEncoder``); the
    ///   writer is unchanged then.
    /// - Complexity: amortised O(number of string fields).
    public mutating func append(_ event: Event) throws(EncodingError) {
        precondition(!finished, "BatchWriter.append after finish()")
        do {
            try records.appendRecord(event, strings: &strings)
        } catch let error as EncodingError {
            throw error
        } catch {
            fatalError("StringTable does not throw: \(error)")
        }
        recordsInBlock += 1
        totalRecords += 1
        if records.count >= blockSize { flushBlock() }
    }

    /// Takes the finished blocks written so far (the file header first), leaving the writer's output empty.
    /// Concatenating every `takeOutput()` and the final ``finish()`` gives the whole file.
    public mutating func takeOutput() -> [UInt8] {
        defer { output.removeAll(keepingCapacity: true) }
        return output
    }

    /// Closes the current block and returns the output not yet taken, without the end block: what a writer that
    /// stops part-way hands out, so that a reader sees every event appended and still reports the file as cut short
    /// (`missingEndBlock`) rather than whole. Appending may go on afterwards.
    public mutating func flush() -> [UInt8] {
        precondition(!finished, "BatchWriter.flush() after finish()")
        flushBlock()
        return takeOutput()
    }

    /// Finishes the current block and writes the end block; returns the output not yet taken.
    public mutating func finish() -> [UInt8] {
        precondition(!finished, "BatchWriter.finish() called twice")
        flushBlock()
        var payload: [UInt8] = []
        appendVarint(&payload, UInt64(strings.count))
        appendVarint(&payload, totalRecords)
        writeBlock(type: BatchFormat.blockEnd, count: 0, payload: payload)
        finished = true
        return takeOutput()
    }

    /// Writes the strings first seen since the last block, then the pending records.
    mutating func flushBlock() {
        if stringsWritten < strings.count {
            var payload: [UInt8] = []
            var count = 0
            for id in stringsWritten..<strings.count {
                var s = strings.strings[id]
                s.withUTF8 { utf8 in
                    appendVarint(&payload, UInt64(utf8.count))
                    payload.append(contentsOf: utf8)
                }
                count += 1
                if payload.count >= blockSize {
                    writeBlock(type: BatchFormat.blockStrings, count: count, payload: payload)
                    payload.removeAll(keepingCapacity: true)
                    count = 0
                }
            }
            if count > 0 { writeBlock(type: BatchFormat.blockStrings, count: count, payload: payload) }
            stringsWritten = strings.count
        }
        if recordsInBlock > 0 {
            records.withUnsafeBytes { payload in
                writeBlock(type: BatchFormat.blockRecords, count: recordsInBlock, payload: payload)
            }
            records.removeAll()
            recordsInBlock = 0
        }
    }

    mutating func writeBlock(type: UInt8, count: Int, payload: [UInt8]) {
        payload.withUnsafeBytes { writeBlock(type: type, count: count, payload: $0) }
    }

    mutating func writeBlock(type: UInt8, count: Int, payload: UnsafeRawBufferPointer) {
        precondition(payload.count <= Int(UInt32.max) && count <= Int(UInt32.max), "batch block too large")
        var header: [UInt8] = [type]
        appendFixed32(&header, UInt32(payload.count))
        appendFixed32(&header, UInt32(count))
        var crc = CRC32C()
        crc.update(header)
        crc.update(payload)
        appendFixed32(&header, crc.value)
        output.append(contentsOf: header)
        output.append(contentsOf: payload)
    }
}

@inlinable
package func appendVarint(_ out: inout [UInt8], _ value: UInt64) {
    var v = value
    while v >= 0x80 {
        out.append(UInt8(truncatingIfNeeded: v) | 0x80)
        v >>= 7
    }
    out.append(UInt8(v))
}

@usableFromInline
func appendFixed32(_ out: inout [UInt8], _ value: UInt32) {
    out.append(UInt8(truncatingIfNeeded: value))
    out.append(UInt8(truncatingIfNeeded: value >> 8))
    out.append(UInt8(truncatingIfNeeded: value >> 16))
    out.append(UInt8(truncatingIfNeeded: value >> 24))
}
