import BoardwalkCodec
import BoardwalkModel

extension WriterState {
    /// `batches`: the keys of the batch's blocks, ``Layout/batchChunk`` per entry, appended under
    /// (first seq of the batch, chunk number), each entry with the batch's event count.
    func writeBatches(_ txn: Transaction, firstSeq: UInt64) throws {
        guard !entries.isEmpty else { return }
        try putBatchEntries(txn, firstSeq: firstSeq, count: UInt32(entries.count), keys: blockKeys)
    }

    /// Puts the batch's entries; `appending` (the batch's are the last entries) with `MDB_APPEND`, else in place
    /// (a fold of the log's oldest batches rewrites entries that later batches' follow).
    func putBatchEntries(
        _ txn: Transaction, firstSeq: UInt64, count: UInt32, keys blockKeys: [EventKey], appending: Bool = true
    ) throws {
        let key = scratch
        var start = 0
        var chunkNumber: UInt16 = 0
        while start < blockKeys.count {
            let end = min(start + Layout.batchChunk, blockKeys.count)
            chunk.storeBE(count, at: 0)
            for i in start..<end {
                blockKeys[i].write(to: chunk + 4 + (i - start) * Layout.eventKeySize)
            }
            key.storeBE(firstSeq, at: 0)
            key.storeBE(chunkNumber, at: 8)
            guard
                try txn.put(
                    dbs.batches, UnsafeRawBufferPointer(start: key, count: Layout.batchKeySize),
                    UnsafeRawBufferPointer(start: chunk, count: 4 + (end - start) * Layout.eventKeySize),
                    flags: appending ? PutFlags.append : 0)
            else {
                throw StoreError(.corrupt, "the batches database already has entries past seq \(firstSeq)")
            }
            chunkNumber &+= 1
            start = end
        }
    }
}
