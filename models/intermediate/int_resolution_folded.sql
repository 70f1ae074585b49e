/* The resolution's fold (docs/architecture.md §5), the second of its three steps: the
   transactions the passes (int_resolution_passes) left unsettled, decided in queue order
   inside one task exactly as the sequential reader decides them. One row per live
   transaction of a coupled batch: its decision (`is_applied`), folded for the remainder,
   the settled one of the last pass for every other transaction. Ephemeral: decided inside
   the judging's statement, and read only for a coupled batch (int_transactions_resolved).
     remainder_candidates  the unsettled transactions' candidates, numbered for the fold,
                           each with the state before it or where the fold stores its source
     fold_input            the remainder's transactions in queue order, in chunks, each with
                           its rows; the settled decisions passed by
     fold                  the sequential reader over the remainder, one chunk at a time
   Decides docs/spec.md 5.2 (Judging a command), 5.5 (publisher_wins), 5.6 (publisher_wins_reinit). */
{%- set publication = qrepl_config() -%}
{%- set reinit = publication.policy == 'publisher_wins_reinit' -%}
/* transactions per chunk of the fold: a step copies its chunk's store, a chunk copies the
    finished ones (about n * chunk + n * n / chunk element copies for n folded rows) */
{%- set chunk = 512 -%}
{%- set stored = 'struct<tran_pos: int, state: binary, applied: boolean>' %}

with

int_resolution_passes as (

    select * from {{ ref('int_resolution_passes') }}

),

remainder_candidates as (

    -- The remainder: the transactions the passes left unsettled. On each row they come
    -- after all the settled ones, so the first remainder candidate on a row meets what the
    -- settled ones left (entry_state), and each later one meets what the previous one left
    -- in the fold (follows_folded; source_chunk, source_offset: where the fold stores it).
    -- The numbering windows put the remainder in one partition and every other transaction
    -- in its own. cut_before (under reinit): a settled transaction of the subscriber is
    -- rejected, which cuts all of its unsettled ones.
    select
        numbered.*,
        {{ qrepl_met_state('applied') }} as entry_state,
        not {{ qrepl_after_settled('settled') }} as follows_folded,
        case when not {{ qrepl_after_settled('settled') }} then lag(fold_chunk) over on_row end as source_chunk,
        case when not {{ qrepl_after_settled('settled') }} then lag(fold_offset) over on_row end as source_offset
    from (
        select
            indexed.*,
            cast(fold_index - min(fold_index) over (partition by fold_group, fold_chunk) as int) as fold_offset
        from (
            select
                grouped.*,
                cast(floor((dense_rank() over (partition by fold_group order by tran_pos) - 1) / {{ chunk }}) as int) as fold_chunk,
                row_number() over in_fold - 1 as fold_index
            from (
                select
                    cut.*,
                    not settled as in_remainder,
                    case when settled then tran_pos else 0 end as fold_group
                from (
                    select
                        int_resolution_passes.*,
                        {% if reinit -%}
                            coalesce(max(settled and not applied) over (partition by subscriber), false)
                        {%- else -%}
                            false
                        {%- endif %} as cut_before
                    from int_resolution_passes
                ) as cut
            ) as grouped
            window in_fold as (partition by fold_group order by tran_pos, article, row_key)
        ) as indexed
    ) as numbered
    window
        on_row as (partition by {{ qrepl_row_partition() }} order by tran_pos),
        earlier_on_row as (
            partition by {{ qrepl_row_partition() }} order by tran_pos rows between unbounded preceding and 1 preceding
        )

),

fold_input as (

    -- the remainder's transactions in queue order, in chunks of {{ chunk }}, each with its
    -- rows; and, passing the fold by, the decisions of every settled transaction
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
                'applied', applied
            ) end) as decided
        from (
            select
                tran_pos,
                subscriber,
                in_remainder,
                max(fold_chunk) as fold_chunk,
                bool_and(applied) as applied,
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

    -- The sequential reader over the remainder, one chunk at a time. `aggregate` copies its
    -- accumulator at every step, so the fold is two-level: over a chunk's transactions the
    -- accumulator is that chunk's store alone (`current`: per folded candidate, the state
    -- it leaves and its transaction's decision), and the finished chunks (`done`) are
    -- carried once per chunk. `cuts` lists the subscribers a rejection has cut (reinit).
    -- For a transaction: the state before each of its rows is its source's state (or
    -- entry_state), and it is applied when every row is in the state it expects and
    -- nothing rejects it anyway. `element_at(transform(array(x), v -> ...), 1)` names an
    -- intermediate value v.
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

folded as (

    select distinct
        decision.tran_pos,
        decision.applied as is_applied
    from fold
        lateral view explode(concat(fold.folded_decisions, fold.decided_outside)) as decision

),

final as (

    select * from folded

)

select * from final
