{{
    config(
        materialized='incremental',
        incremental_strategy='append',
        full_refresh=false,
        tblproperties={'format-version': '2'},
    )
}}
{#- Cuts the batch: every queued command not in an earlier batch gets this batch's id, once.
    Validation happens here; a command failing a check quarantines its whole transaction. -#}
{%- set publication = qrepl_config() -%}
{%- set batch_id = qrepl_batch_id() -%}

with

stg_replication_queue as (

    select * from {{ ref('stg_replication_queue') }}

),

stg_subscriptions as (

    select * from {{ ref('int_batch_subscriptions') }}
    where batch_id = {{ batch_id }}

),

int_publisher_rows as (

    select * from {{ ref('int_publisher_rows') }}

),

{% if is_incremental() %}
    earlier_batches as (

        select * from {{ this }}

    ),
{% endif %}

new_commands as (

    select queued.*
    from stg_replication_queue as queued
    {% if is_incremental() %}
        left anti join earlier_batches
            on
                queued.subscriber <=> earlier_batches.subscriber
                and queued.tran_id <=> earlier_batches.tran_id
                and queued.command_seq <=> earlier_batches.command_seq
                and queued.enqueued_at <=> earlier_batches.enqueued_at
    {% endif %}
    where {{ batch_not_yet_written(batch_id) }}

),

new_commands_typed as (
    {{ queued_rows_typed_sql(publication, 'new_commands') }}
),

earlier_transactions as (

    {% if is_incremental() %}
        select distinct
            subscriber,
            tran_id
        from earlier_batches
    {% else %}
        select
            cast(null as string) as subscriber,
            cast(null as string) as tran_id
        where false
    {% endif %}

),

duplicates_counted as (

    select
        new_commands_typed.*,
        count(*) over (partition by subscriber, tran_id, command_seq) as same_command_count,
        case
            when new_version is not null then count(*) over (partition by new_version)
            else 0
        end as same_new_version_count
    from new_commands_typed

),

commands_checked as (

    select
        duplicates_counted.*,
        case
            when stg_subscriptions.subscriber is null then 'unknown subscriber'
            when not duplicates_counted.article_known then 'unknown article'
            when duplicates_counted.op is null or duplicates_counted.op not in ('I', 'U', 'D') then 'bad op'
            when duplicates_counted.row_key is null or duplicates_counted.row_key = '' then 'missing key'
            when
                (duplicates_counted.op = 'I' and (duplicates_counted.old_version is not null or duplicates_counted.new_version is null))
                or (duplicates_counted.op = 'U' and (duplicates_counted.old_version is null or duplicates_counted.new_version is null))
                or (duplicates_counted.op = 'D' and (duplicates_counted.old_version is null or duplicates_counted.new_version is not null))
                then 'version fields inconsistent with op'
            when duplicates_counted.op in ('I', 'U') and not duplicates_counted.json_ok then 'malformed JSON'
            when duplicates_counted.op in ('I', 'U') and not (duplicates_counted.typed_key <=> duplicates_counted.row_key)
                then 'key mismatch'
            when duplicates_counted.same_command_count > 1 or earlier_transactions.tran_id is not null
                then 'duplicate command'
            when
                duplicates_counted.new_version is not null
                and (
                    duplicates_counted.same_new_version_count > 1
                    or int_publisher_rows.msrepl_tran_version <=> duplicates_counted.new_version
                )
                then 'duplicate new_version'
        end as own_reject_reason
    from duplicates_counted
    left join stg_subscriptions
        on duplicates_counted.subscriber = stg_subscriptions.subscriber
    left join earlier_transactions
        on
            duplicates_counted.subscriber = earlier_transactions.subscriber
            and duplicates_counted.tran_id = earlier_transactions.tran_id
    left join int_publisher_rows
        on
            duplicates_counted.article = int_publisher_rows.article
            and duplicates_counted.row_key = int_publisher_rows.row_key

),

transactions_checked as (

    select
        commands_checked.*,
        max(own_reject_reason) over (partition by subscriber, tran_id) as any_reject_reason
    from commands_checked

),

final as (

    select
        {{ batch_id }} as batch_id,
        subscriber,
        generation,
        tran_id,
        tran_seq,
        command_seq,
        article,
        op,
        row_key,
        old_version,
        new_version,
        new_row,
        old_row,
        enqueued_at,
        typed_row,
        case
            when own_reject_reason is not null then own_reject_reason
            when any_reject_reason is not null then 'transaction has a quarantined command'
        end as reject_reason,
        {{ qrepl_batch_time() }} as batched_at
    from transactions_checked

)

select * from final
