{{
    config(
        materialized='incremental',
        incremental_strategy='append',
        full_refresh=false,
        tblproperties={'format-version': '2'},
    )
}}
{#- One row per valid transaction of the batch: its processing position and whether the
    sequential reader would apply it (docs/architecture.md §5). Kept per batch so a rerun
    after a crash finishes the batch as it was decided.

    Under subscriber_wins every live transaction is applied (the steps below are defined but
    never read). Otherwise one statement decides the batch in named steps:
      candidates       one row per (live transaction, publisher row), states as strings
      naive_*          every candidate judged as if each earlier one on its row were applied
      doubt_<k>        which transactions an earlier rejection may still flip, k hops deep
      in_remainder     the doubtful transactions (past the hop limit, all later ones too)
      fold             the remainder folded in queue order inside one task, exactly as the
                       sequential reader does
      resolved         naive decisions outside the remainder, folded ones inside it -#}
{%- set publication = qrepl_config() -%}
{%- set batch_id = qrepl_batch_id() -%}
{%- set reinit = publication.policy == 'publisher_wins_reinit' -%}
{#- hops of doubt followed before the remainder becomes "everything from the first still
    spreading transaction on". One hop settles typical batches (doubt rarely crosses to a
    second row); each further hop costs two windows over the candidates. -#}
{%- set hops = 1 -%}
{#- transactions per chunk of the fold: a step copies its chunk's store, a chunk copies the
    finished ones (about n * chunk + n * n / chunk element copies for n folded rows) -#}
{%- set chunk = 512 -%}
{%- set stored = 'struct<tran_pos: int, state: string, applied: boolean>' -%}
{#- the columns every doubt hop carries on -#}
{%- set carried = ['tran_pos', 'subscriber', 'article', 'row_key', 'expects_absent', 'expected_version',
    'has_own_write_conflict', 'produced_state', 'root_state', 'previous_pos', 'naive_state_before',
    'naive_applied', 'naive_state_after', 'previous_naive_state_after'] %}

with

int_batch_transactions as (

    select * from {{ ref('int_batch_transactions') }}
    where batch_id = {{ batch_id }}

),

int_transaction_rows as (

    select * from {{ ref('int_transaction_rows') }}
    where batch_id = {{ batch_id }} and prejudged_outcome is null

),

candidates as (

    {#- a row state is the row's version ('' for a row without one), or null for no row #}
    select
        int_transaction_rows.tran_pos,
        int_transaction_rows.subscriber,
        int_transaction_rows.article,
        int_transaction_rows.row_key,
        int_transaction_rows.expects_absent,
        int_transaction_rows.expected_version,
        int_transaction_rows.has_own_write_conflict,
        case
            when not int_transaction_rows.produces_absent
                then coalesce(int_transaction_rows.produced_version, '')
        end as produced_state,
        case
            when int_transaction_rows.root_exists then coalesce(int_transaction_rows.root_version, '')
        end as root_state
    from int_transaction_rows

),

on_rows as (

    {#- every candidate judged as if each earlier candidate on its row were applied #}
    select
        candidates.*,
        lag(tran_pos) over on_row as previous_pos,
        not has_own_write_conflict
        and case
            when row_number() over on_row = 1 then {{ qrepl_state_matches('root_state') }}
            else {{ qrepl_state_matches('lag(produced_state) over on_row') }}
        end as naive_matches,
        case
            when row_number() over on_row = 1 then root_state
            else lag(produced_state) over on_row
        end as naive_state_before
    from candidates
    window on_row as (partition by article, row_key order by tran_pos)

),

naive_decided as (

    {#- a transaction is applied when all its rows match; under reinit, not after its
        subscriber's first rejection either #}
    select
        on_rows.*,
        {%- if reinit %}
        tran_pos < coalesce(min(case when not transaction_matches then tran_pos end) over (
            partition by subscriber
        ), 2147483647) and transaction_matches as naive_applied
        {%- else %}
            transaction_matches as naive_applied
        {%- endif %}
    from (
        select
            on_rows.*,
            bool_and(naive_matches) over (partition by tran_pos) as transaction_matches
        from on_rows
    ) as on_rows

),

doubt_0 as (

    {#- the state each candidate leaves when its naive decision is exact, and the state the
        previous candidate on its row leaves (placed reads it; computed here, where the
        first hop's window over the rows shuffles the candidates by row anyway) #}
    select
        decided.*,
        lag(naive_state_after) over (partition by article, row_key order by tran_pos) as previous_naive_state_after
    from (
        select
            naive_decided.*,
            case when naive_applied then produced_state else naive_state_before end as naive_state_after,
            false as doubtful
        from naive_decided
    ) as decided

),

{#- Doubt. A rejected transaction (a disturber) leaves its rows as they were, so every later
    candidate on those rows was judged against the wrong state and is doubtful; a doubtful
    transaction spreads doubt to the later candidates on all of its rows (and, under reinit,
    to its subscriber's later transactions: whether they follow a first rejection is doubtful
    too). A transaction without doubt is decided exactly by the naive step. #}
{% for k in range(hops + 1) -%}
    doubt_{{ k + 1 }} as (

        select
            {{ carried | join(', ') }},
            doubtful_before,
            previous_doubtful_before,
            bool_or(doubtful_here) over (partition by tran_pos) as doubtful
        from (
            select
                {{ carried | join(', ') }},
                doubtful as doubtful_before,
                {#- whether the previous candidate on the row was doubtful before this hop
                    (placed reads the last hop's): the same window partition as below #}
                lag(doubtful) over (partition by article, row_key order by tran_pos) as previous_doubtful_before,
                coalesce(tran_pos > min(case when not naive_applied or doubtful then tran_pos end) over (
                    partition by article, row_key
                ), false)
                {%- if reinit %}
            or coalesce(tran_pos > min(case when doubtful then tran_pos end) over (partition by subscriber), false)
            {%- endif %} as doubtful_here
            from doubt_{{ k }}
        ) as spread

    ),

{% endfor -%}

placed as (

    {#- The remainder: the doubtful transactions, and, when doubt still reached new ones
        after the last hop (it can only go on to later positions), everything from the
        first of those on (remainder_from). entry_state: the state before a row's first
        folded candidate, which is what the previous (exactly decided) candidate left, or
        the publisher's. follows_folded: the previous candidate on the row is in the
        remainder. Both read the previous candidate's columns taken in the hops' windows
        over the rows, so this step shuffles the candidates no further by row. #}
    select
        with_remainder.*,
        case
            when previous_pos is null then root_state
            else previous_naive_state_after
        end as entry_state,
        coalesce(previous_doubtful_before or previous_pos >= remainder_from, false) as follows_folded,
        {#- under reinit: a subscriber already cut by an exactly decided rejection earlier
            in the batch #}
        {% if reinit -%}
            coalesce(max(not in_remainder and not naive_applied) over (
                partition by subscriber order by tran_pos range between unbounded preceding and 1 preceding
            ), false)
        {%- else -%}
            false
        {%- endif %} as cut_before
    from (
        select
            doubt.*,
            doubt.doubtful_before or doubt.tran_pos >= doubt.remainder_from as in_remainder
        from (
            select
                doubt_{{ hops + 1 }}.*,
                coalesce(
                    min(case when doubtful and not doubtful_before then tran_pos end) over (), 2147483647
                ) as remainder_from
            from doubt_{{ hops + 1 }}
        ) as doubt
    ) as with_remainder

),

remainder_candidates as (

    {#- where each folded candidate's state goes in the fold's store (chunk, offset), and
        where the state before it comes from: the previous folded candidate on its row
        (source_chunk, source_offset), else entry_state. The numbering windows put the
        remainder in one partition and every other transaction in its own. #}
    select
        located.*,
        case when located.follows_folded then lag(located.fold_chunk) over on_row end as source_chunk,
        case when located.follows_folded then lag(located.fold_offset) over on_row end as source_offset
    from (
        select
            numbered.*,
            cast(fold_index - min(fold_index) over (partition by fold_group, fold_chunk) as int) as fold_offset
        from (
            select
                grouped.*,
                cast(floor((dense_rank() over (partition by fold_group order by tran_pos) - 1) / {{ chunk }}) as int) as fold_chunk,
                row_number() over in_fold - 1 as fold_index
            from (
                select
                    placed.*,
                    case when in_remainder then 0 else tran_pos end as fold_group
                from placed
            ) as grouped
            window in_fold as (partition by fold_group order by tran_pos, article, row_key)
        ) as numbered
    ) as located
    window on_row as (partition by located.article, located.row_key order by located.tran_pos)

),

fold_input as (

    {#- the remainder's transactions in queue order, in chunks of {{ chunk }}, each with its
        rows; and, passing the fold by, the naive decisions of every other transaction #}
    select
        sort_array(collect_list(case when in_remainder then named_struct(
            'fold_chunk', fold_chunk,
            'transactions', transactions
        ) end)) as chunks,
        flatten(collect_list(case when not in_remainder then decided end)) as decided_outside
    from (
        select
            in_remainder,
            fold_chunk,
            sort_array(collect_list(case when in_remainder then named_struct(
                'tran_pos', tran_pos,
                'subscriber', subscriber,
                'rejected_anyway', rejected_anyway,
                'rows', transaction_rows
            ) end)) as transactions,
            collect_list(case when not in_remainder then named_struct(
                'tran_pos', tran_pos,
                'applied', naive_applied
            ) end) as decided
        from (
            select
                tran_pos,
                subscriber,
                in_remainder,
                max(fold_chunk) as fold_chunk,
                bool_and(naive_applied) as naive_applied,
                bool_or(has_own_write_conflict or cut_before) as rejected_anyway,
                sort_array(collect_list(case when in_remainder then named_struct(
                    'fold_index', fold_index,
                    'source_chunk', source_chunk,
                    'source_offset', source_offset,
                    'entry_state', entry_state,
                    'expects_absent', expects_absent,
                    'expected_version', expected_version,
                    'produced_state', produced_state
                ) end)) as transaction_rows
            from remainder_candidates
            group by tran_pos, subscriber, in_remainder
        ) as transactions
        group by in_remainder, fold_chunk
    ) as chunked

),

fold as (

    {#- The sequential reader over the remainder, one chunk at a time. `aggregate` copies its
        accumulator at every step, so the fold is two-level: over a chunk's transactions the
        accumulator is that chunk's store alone (`current`: per folded candidate, the state
        it leaves and its transaction's decision), and the finished chunks (`done`) are
        carried once per chunk. `cuts` lists the subscribers a rejection has cut (reinit).
        For a transaction: the state before each of its rows is its source's state (or
        entry_state), and it is applied when every row is in the state it expects and
        nothing rejects it anyway. `element_at(transform(array(x), v -> ...), 1)` names an
        intermediate value v. #}
    select
        aggregate(
            chunks,
            named_struct(
                'done', cast(array() as array<array<{{ stored }}>>),
                'cuts', cast(array() as array<string>)
            ),
            (finished, chunk) -> element_at(transform(
                array(aggregate(
                    chunk.transactions,
                    named_struct('current', cast(array() as array<{{ stored }}>), 'cuts', finished.cuts),
                    (store, tx) -> element_at(transform(
                        array(transform(tx.rows, r -> case
                            when r.source_chunk is null then r.entry_state
                            when r.source_chunk < size(finished.done)
                                then element_at(element_at(finished.done, r.source_chunk + 1), r.source_offset + 1).state
                            else element_at(store.current, r.source_offset + 1).state
                        end)),
                        befores -> element_at(transform(
                            array(
                                not tx.rejected_anyway
                                and not array_contains(store.cuts, tx.subscriber)
                                and forall(
                                    zip_with(tx.rows, befores, (r, before) -> case
                                        when r.expects_absent then before is null
                                        else coalesce(before = r.expected_version, false)
                                    end),
                                    matches -> matches
                                )
                            ),
                            applied -> named_struct(
                                'current', concat(store.current, zip_with(tx.rows, befores, (r, before) -> named_struct(
                                    'tran_pos', tx.tran_pos,
                                    'state', if(applied, r.produced_state, before),
                                    'applied', applied
                                ))),
                                'cuts', {% if reinit -%}
                                    if(applied, store.cuts, array_union(store.cuts, array(tx.subscriber)))
                                {%- else -%}
                                    store.cuts
                                {%- endif %}
                            )
                        ), 1)
                    ), 1)
                )),
                filled -> named_struct('done', concat(finished.done, array(filled.current)), 'cuts', filled.cuts)
            ), 1),
            finished -> transform(
                flatten(finished.done),
                folded -> named_struct('tran_pos', folded.tran_pos, 'applied', folded.applied)
            )
        ) as folded_decisions,
        decided_outside
    from fold_input

),

resolved as (

    {% if publication.policy == 'subscriber_wins' %}
        select
            tran_pos,
            prejudged_outcome is null as is_applied
        from int_batch_transactions
    {% else %}
        select distinct
            decision.tran_pos,
            decision.applied as is_applied
        from fold
            lateral view explode(concat(fold.folded_decisions, fold.decided_outside)) as decision
    {% endif %}

),

final as (

    select
        int_batch_transactions.batch_id,
        int_batch_transactions.subscriber,
        int_batch_transactions.tran_id,
        int_batch_transactions.tran_pos,
        int_batch_transactions.generation,
        int_batch_transactions.command_count,
        int_batch_transactions.row_count,
        int_batch_transactions.prejudged_outcome,
        '{{ publication.policy }}' as policy,
        int_batch_transactions.prejudged_outcome is null and coalesce(resolved.is_applied, false) as is_applied
    from int_batch_transactions
    left join resolved
        on int_batch_transactions.tran_pos = resolved.tran_pos
    where {{ batch_not_yet_written(batch_id) }}

)

select * from final
