/* One row per valid transaction of the batch: its processing position and whether the
   sequential reader would apply it (docs/architecture.md §5), the last of the resolution's
   three steps. Ephemeral: decided inside the judging's statement (int_queued_commands_judged,
   its only reader), which stores the decisions with every command; every input is frozen
   with the batch, so deciding again after a crash before the judging was written decides
   the same.

   Which decision a live transaction gets is the one choice this step makes, by how the run
   resolves the batch (macro qrepl_resolution, recorded in queue_reader_history):
     subscriber_wins   every live transaction is applied
     uncoupled batch   pass 0's decision (int_resolution_passes), exact there: no publisher
                       row has two candidates
     coupled batch     the fold's (int_resolution_folded): settled by the passes, or folded
   The steps not chosen are defined in the statement and never read, so Spark neither plans
   nor runs them. A prejudged transaction (int_batch_transactions) is never applied.
   Decides docs/spec.md 5.5 (publisher_wins), 5.6 (publisher_wins_reinit), 5.7 (subscriber_wins). */
{%- set publication = qrepl_config() -%}
{%- set batch_id = qrepl_batch_id() -%}
/* how this batch is resolved (macro qrepl_resolution) */
{%- set resolution = qrepl_resolution() %}

with

int_batch_transactions as (

    select * from {{ ref('int_batch_transactions') }}
    where batch_id = {{ batch_id }}

),

int_resolution_passes as (

    select * from {{ ref('int_resolution_passes') }}

),

int_resolution_folded as (

    select * from {{ ref('int_resolution_folded') }}

),

resolved as (

    {% if resolution.steps == 'every live transaction applied' -%}
        select
            tran_pos,
            prejudged_outcome is null as is_applied
        from int_batch_transactions
    {%- elif not resolution.coupled -%}
        -- pass 0 settled every transaction
        select distinct
            tran_pos,
            applied as is_applied
        from int_resolution_passes
    {%- else -%}
        select
            tran_pos,
            is_applied
        from int_resolution_folded
    {%- endif %}

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

)

select * from final
