{% macro resolve_applied_transactions(transaction_rows, row_roots, policy, batch_id) %}
    {#- Decides, set-based, which transactions of the batch the sequential reader would apply
        under publisher_wins or publisher_wins_reinit. Returns the name of a parquet work
        table (`<schema>.qrepl_resolve_b<batch>_applied`) with one `tran_pos` per applied
        transaction; `drop_resolve_views` drops it after the model.

        Each row's accepted commands form a chain from the publisher's version: a candidate
        (transaction, row) is applied when the state before it matches what it expects, and
        that state is whatever the last applied candidate left. `_qrepl_chain_reach` finds
        every row's chain by pointer doubling (log2 of the chain length in passes).

        Candidates of rejected transactions must be left out of the chains; a transaction can
        be rejected by one row while matching on another (multi-row transactions), and under
        publisher_wins_reinit everything after a subscriber's first conflict is rejected. Each
        pass decides every live transaction tentatively from the chains; a rejected one still
        on a chain is a disturber, and `_qrepl_influence` marks everything its rejection may
        still change (later candidates on its rows, spread through multi-row transactions).
        Every rejection outside that influence is exact: all of them are fixed at once and the
        chains recomputed (past the influence's hop limit, only the earliest disturber's).
        Batches without disturbers finish after the first pass (docs/architecture.md §5). -#}
    {#- the invocation id keeps a killed run's orphaned table directories from colliding with
        the next run's work tables -#}
    {%- set prefix = _qrepl_identifier(target.schema, 'schema') ~ '.qrepl_resolve_b' ~ batch_id ~ '_' ~ invocation_id[:8] ~ '_' -%}
    {%- do drop_resolve_views() -%}
    {%- call statement('resolve_candidates', fetch_result=false) -%}
        create table {{ prefix }}candidates using parquet as
        select tran_pos, subscriber, article, row_key, expects_absent, expected_version,
            produces_absent, produced_version, has_own_write_conflict
        from {{ transaction_rows }}
        where batch_id = {{ batch_id }} and prejudged_outcome is null
    {%- endcall -%}
    {%- call statement('resolve_excluded_0', fetch_result=false) -%}
        {#- A transaction that conflicts with its own writes is rejected whatever the publisher
            holds; under reinit so is every later transaction of its subscriber. -#}
        create table {{ prefix }}excluded_0 using parquet as
        with own_write_conflicts as (
            select subscriber, min(tran_pos) as first_pos
            from {{ prefix }}candidates
            where has_own_write_conflict
            group by subscriber
        )
        select distinct candidates.tran_pos
        from {{ prefix }}candidates as candidates
        inner join own_write_conflicts
            on candidates.subscriber = own_write_conflicts.subscriber
        where candidates.has_own_write_conflict
            {%- if policy == 'publisher_wins_reinit' %}
            or candidates.tran_pos >= own_write_conflicts.first_pos
            {%- endif %}
    {%- endcall -%}
    {%- set ns = namespace(done=false, iteration=0, doubling=0) -%}
    {#- at most one pass per transaction of the batch; two nested ranges stay under Jinja's range limit -#}
    {%- for _outer in range(1000) if not ns.done -%}
    {%- for _ in range(1000) if not ns.done -%}
        {%- set i = ns.iteration -%}
        {%- set reach = _qrepl_chain_reach(prefix ~ 'candidates', prefix ~ 'excluded_' ~ i, row_roots, prefix ~ 'pass' ~ i ~ '_') -%}
        {%- set on_chain = reach.relation -%}
        {%- set ns.doubling = [ns.doubling, reach.steps] | max -%}
        {%- call statement('resolve_tentative', fetch_result=false) -%}
            create table {{ prefix }}tentative_{{ i }} using parquet as
            with live as (
                select candidates.*
                from {{ prefix }}candidates as candidates
                left anti join {{ prefix }}excluded_{{ i }} as excluded
                    on candidates.tran_pos = excluded.tran_pos
            ),
            flagged as (
                select
                    live.tran_pos,
                    live.subscriber,
                    max(on_chain.pos is null) as conflicts,
                    max(on_chain.pos is not null) as touches_chain
                from live
                left join {{ on_chain }} as on_chain
                    on live.article = on_chain.article
                    and live.row_key = on_chain.row_key
                    and live.tran_pos = on_chain.pos
                group by live.tran_pos, live.subscriber
            )
            select
                flagged.*,
                {%- if policy == 'publisher_wins_reinit' %}
                min(case when conflicts then tran_pos end) over (partition by subscriber) as subscriber_cut,
                max(conflicts) over (
                    partition by subscriber order by tran_pos
                    rows between unbounded preceding and current row
                ) as rejected
                {%- else %}
                cast(null as int) as subscriber_cut,
                conflicts as rejected
                {%- endif %}
            from flagged
        {%- endcall -%}
        {%- set first_disturber = run_query(
            'select min(tran_pos) from ' ~ prefix ~ 'tentative_' ~ i ~ ' where rejected and touches_chain'
        ).rows[0][0] -%}
        {%- if first_disturber is none -%}
            {%- set ns.done = true -%}
        {%- else -%}
            {%- set influence = _qrepl_influence(prefix, i, policy) -%}
            {%- call statement('resolve_exclude', fetch_result=false) -%}
                create table {{ prefix }}excluded_{{ i + 1 }} using parquet as
                select tran_pos from {{ prefix }}excluded_{{ i }}
                union
                select tentative.tran_pos from {{ prefix }}tentative_{{ i }} as tentative
                {#- every rejection that nothing earlier can still change is exact #}
                {%- if influence is not none %}
                left anti join {{ influence }} as influence
                    on {% if policy == 'publisher_wins_reinit' %}tentative.subscriber_cut{% else %}tentative.tran_pos{% endif %} = influence.tran_pos
                    and influence.influenced
                where tentative.rejected
                {%- elif policy == 'publisher_wins_reinit' %}
                where tentative.rejected
                    and tentative.subscriber_cut <= {{ first_disturber }} and tentative.tran_pos >= tentative.subscriber_cut
                {%- else %}
                where tentative.rejected and tentative.tran_pos <= {{ first_disturber }}
                {%- endif %}
            {%- endcall -%}
            {%- set ns.iteration = i + 1 -%}
        {%- endif -%}
    {%- endfor -%}
    {%- endfor -%}
    {%- call statement('resolve_applied', fetch_result=false) -%}
        create table {{ prefix }}applied using parquet as
        select tran_pos from {{ prefix }}tentative_{{ ns.iteration }} where not rejected
    {%- endcall -%}
    {%- do log('qrepl: batch ' ~ batch_id ~ ' resolved in ' ~ (ns.iteration + 1) ~ ' pass(es), at most '
        ~ ns.doubling ~ ' pointer-doubling step(s) per pass', info=true) -%}
    {{ return(prefix ~ 'applied') }}
{% endmacro %}


{% macro _qrepl_influence(prefix, i, policy) %}
    {#- Which live transactions of pass i may still be decided wrongly. A disturber (rejected,
        yet on a chain) makes every later candidate on its rows doubtful; a doubtful
        transaction makes every later candidate on all of its rows doubtful in turn (and,
        under publisher_wins_reinit, every later transaction of its subscriber, as if the
        subscriber were one more row). A transaction none of whose rows has a doubtful
        candidate before it is decided exactly, so all such rejections can be fixed at once,
        not only the earliest. The spread takes one statement per hop through distinct rows;
        after 16 hops the caller falls back to fixing the earliest disturber. Returns a table
        (tran_pos, influenced) or none. -#}
    {%- call statement('influence_touch', fetch_result=false) -%}
        create table {{ prefix }}touch_{{ i }} using parquet as
        select distinct tentative.tran_pos, candidates.article, candidates.row_key
        from {{ prefix }}tentative_{{ i }} as tentative
        inner join {{ prefix }}candidates as candidates
            on tentative.tran_pos = candidates.tran_pos
        {%- if policy == 'publisher_wins_reinit' %}
        union all
        select tran_pos, '' as article, subscriber as row_key
        from {{ prefix }}tentative_{{ i }}
        {%- endif %}
    {%- endcall -%}
    {%- call statement('influence_0', fetch_result=false) -%}
        create table {{ prefix }}influence_{{ i }}_0 using parquet as
        select tran_pos, false as influenced
        from {{ prefix }}tentative_{{ i }}
        where rejected and touches_chain
    {%- endcall -%}
    {%- set ns = namespace(result=none, k=0, sources=run_query(
        'select count(*) from ' ~ prefix ~ 'influence_' ~ i ~ '_0').rows[0][0]) -%}
    {%- for _ in range(16) if ns.result is none -%}
        {%- set k = ns.k -%}
        {%- call statement('influence_spread', fetch_result=false) -%}
            create table {{ prefix }}influence_{{ i }}_{{ k + 1 }} using parquet as
            with marks as (
                select touch.article, touch.row_key, min(touch.tran_pos) as first_pos
                from {{ prefix }}touch_{{ i }} as touch
                inner join {{ prefix }}influence_{{ i }}_{{ k }} as sources
                    on touch.tran_pos = sources.tran_pos
                group by touch.article, touch.row_key
            ),
            flagged as (
                select touch.tran_pos, true as influenced
                from {{ prefix }}touch_{{ i }} as touch
                inner join marks
                    on touch.article = marks.article and touch.row_key = marks.row_key
                where touch.tran_pos > marks.first_pos
                union all
                select tran_pos, false as influenced
                from {{ prefix }}influence_{{ i }}_{{ k }}
            )
            select tran_pos, max(influenced) as influenced
            from flagged
            group by tran_pos
        {%- endcall -%}
        {%- set sources = run_query('select count(*) from ' ~ prefix ~ 'influence_' ~ i ~ '_' ~ (k + 1)).rows[0][0] -%}
        {%- if sources == ns.sources -%}
            {%- set ns.result = prefix ~ 'influence_' ~ i ~ '_' ~ (k + 1) -%}
        {%- else -%}
            {%- set ns.sources = sources -%}
            {%- set ns.k = k + 1 -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(ns.result) }}
{% endmacro %}


{% macro _qrepl_chain_reach(candidates, excluded, row_roots, prefix) %}
    {#- Every (article, row_key, pos) on its row's chain, pos 0 being the publisher's state.
        next(a) is the first later candidate expecting what a leaves (a version is produced
        once, so this is a join; the absent state is produced by many deletes, so the first
        later insert is found with a window). The chain is the path from pos 0 along next(),
        collected by pointer doubling. -#}
    {%- call statement('chain_next', fetch_result=false) -%}
        create table {{ prefix }}next using parquet as
        with nodes as (
            select article, row_key, 0 as pos, cast(null as boolean) as expects_absent,
                cast(null as string) as expected_version,
                not root_exists as produces_absent, root_version as produced_version
            from {{ row_roots }}
            union all
            select candidates.article, candidates.row_key, candidates.tran_pos as pos,
                candidates.expects_absent, candidates.expected_version,
                candidates.produces_absent, candidates.produced_version
            from {{ candidates }} as candidates
            left anti join {{ excluded }} as excluded
                on candidates.tran_pos = excluded.tran_pos
        ),
        version_next as (
            select producer.article, producer.row_key, producer.pos, min(consumer.pos) as next_pos
            from nodes as producer
            inner join nodes as consumer
                on producer.article = consumer.article
                and producer.row_key = consumer.row_key
                and consumer.expected_version = producer.produced_version
                and consumer.pos > producer.pos
                and not consumer.expects_absent
            where not producer.produces_absent
            group by producer.article, producer.row_key, producer.pos
        ),
        insert_next as (
            select article, row_key, pos, produces_absent,
                min(case when expects_absent then pos end) over (
                    partition by article, row_key order by pos
                    rows between 1 following and unbounded following
                ) as next_insert_pos
            from nodes
        )
        select insert_next.article, insert_next.row_key, insert_next.pos,
            case when insert_next.produces_absent then insert_next.next_insert_pos
                else version_next.next_pos end as next_pos
        from insert_next
        left join version_next
            on insert_next.article = version_next.article
            and insert_next.row_key = version_next.row_key
            and insert_next.pos = version_next.pos
    {%- endcall -%}
    {%- call statement('chain_reach_0', fetch_result=false) -%}
        create table {{ prefix }}reach_0 using parquet as
        select article, row_key, pos from {{ prefix }}next where pos = 0
    {%- endcall -%}
    {%- call statement('chain_jump_0', fetch_result=false) -%}
        create table {{ prefix }}jump_0 using parquet as
        select article, row_key, pos, next_pos from {{ prefix }}next where next_pos is not null
    {%- endcall -%}
    {%- set ns = namespace(done=false, k=0, reached=run_query('select count(*) from ' ~ prefix ~ 'reach_0').rows[0][0]) -%}
    {%- for _ in range(64) if not ns.done -%}
        {%- set k = ns.k -%}
        {%- call statement('chain_reach', fetch_result=false) -%}
            create table {{ prefix }}reach_{{ k + 1 }} using parquet as
            select article, row_key, pos from {{ prefix }}reach_{{ k }}
            union
            select jump.article, jump.row_key, jump.next_pos
            from {{ prefix }}reach_{{ k }} as reach
            inner join {{ prefix }}jump_{{ k }} as jump
                on reach.article = jump.article and reach.row_key = jump.row_key and reach.pos = jump.pos
        {%- endcall -%}
        {%- set reached = run_query('select count(*) from ' ~ prefix ~ 'reach_' ~ (k + 1)).rows[0][0] -%}
        {%- if reached == ns.reached -%}
            {%- set ns.done = true -%}
        {%- else -%}
            {%- set ns.reached = reached -%}
            {%- call statement('chain_jump', fetch_result=false) -%}
                create table {{ prefix }}jump_{{ k + 1 }} using parquet as
                select first_hop.article, first_hop.row_key, first_hop.pos, second_hop.next_pos
                from {{ prefix }}jump_{{ k }} as first_hop
                inner join {{ prefix }}jump_{{ k }} as second_hop
                    on first_hop.article = second_hop.article
                    and first_hop.row_key = second_hop.row_key
                    and first_hop.next_pos = second_hop.pos
            {%- endcall -%}
            {%- set ns.k = k + 1 -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return({'relation': prefix ~ 'reach_' ~ (ns.k + 1), 'steps': ns.k + 1}) }}
{% endmacro %}


{% macro drop_resolve_views() %}
    {#- The resolution's work tables (small parquet tables: materialized, so the doubling's
        plans do not nest); dropped after the resolution and before a new one, in case an
        earlier run stopped half way. DDL goes through statement(fetch_result=false): over
        Thrift, run_query on a statement without a result set fails. -#}
    {%- if execute -%}
        {%- set schema = _qrepl_identifier(target.schema, 'schema') -%}
        {%- set tables = run_query("show tables in " ~ schema ~ " like 'qrepl_resolve_*'") -%}
        {%- for row in tables.rows if not row[2] -%}
            {%- call statement('drop_resolve_table', fetch_result=false) -%}
                drop table if exists {{ schema }}.{{ _qrepl_identifier(row[1], 'work table') }} purge
            {%- endcall -%}
        {%- endfor -%}
    {%- endif -%}
{% endmacro %}
