{% macro qrepl_state_bytes(version) %}
    {#- A version as the resolution carries it: binary, compared byte for byte. A canonical UUID
        (what the queue's versions are, validated in int_batch_commands) becomes its 16 bytes;
        any other text (a publisher row written around qrepl may hold anything, '' stands for
        a row without a version) becomes 17 zero bytes and then its UTF-8 bytes. The two forms
        never meet (16 bytes against at least 17), and each is one-to-one, so two versions are
        equal exactly when their bytes are. Null stays null. -#}
    case
        when {{ version }} rlike '{{ qrepl_uuid_pattern() }}' then unhex(replace({{ version }}, '-', ''))
        else concat(unhex('0000000000000000000000000000000000'), encode({{ version }}, 'UTF-8'))
    end
{%- endmacro %}
