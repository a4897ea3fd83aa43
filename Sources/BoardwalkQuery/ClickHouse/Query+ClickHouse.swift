extension Query {
    /// The query as one ClickHouse `SELECT` over the table that `boardwalk export --format clickhouse` fills
    /// (``ClickHouseTable/createStatement(table:)``), giving the same rows as ``run(on:options:)``: the same
    /// column names, in the same order, numbers equal (to rounding of sums), durations in seconds and
    /// timestamps as `DateTime64(6, 'UTC')`; an answer column holds the answer's JSON text.
    ///
    /// See `docs/clickhouse.md` for how each semantics rule is expressed, and where ClickHouse differs
    /// (`now()` is ClickHouse's clock; strings sort by bytes).
    /// - Parameter table: the table name (quoted as needed).
    /// - Throws: ``QueryError`` of kind `.type` for a query with no SQL form (`explain`).
    /// - Complexity: O(size of the query).
    public func clickHouseSQL(table: String = ClickHouseTable.defaultName) throws(QueryError) -> String {
        var translator = ClickHouseTranslator(query: checked, table: table)
        return try translator.translate()
    }
}
