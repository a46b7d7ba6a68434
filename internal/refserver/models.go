package refserver

import (
	"fmt"
	"net/http"
	"slices"
)

// The precisions SGLang's PipelineConfig defaults to (configs/pipeline_configs/base.py:
// dit_precision "bf16", vae_precision "fp32"), which the model card reports.
const (
	ditPrecision = "bf16"
	vaePrecision = "fp32"
)

// defaultTaskType is what the reference model reports when Config.TaskType is empty.
const defaultTaskType = "T2I"

// taskTakesImage lists SGLang's task types that take an image input
// (ModelTaskType.accepts_image_input, configs/pipeline_configs/base.py, pandalee99/sglang @
// cce0a1244): every other one refuses an input_reference.
var taskTakesImage = []string{"I2V", "I2I", "TI2I", "TI2V", "I2M", "VLA_ACTION"}

// served is the model id the server names: SGLang's served_model_name, which defaults to
// --model-id, else the model path (server_args.py __post_init__); the model-id-ignored fault
// names the path whatever --model-id says.
func (h *Handler) served() string {
	if h.cfg.ModelID != "" && !h.cfg.Faults.ModelIDIgnored {
		return h.cfg.ModelID
	}
	return h.cfg.Model
}

// modelCard is SGLang's DiffusionModelCard (entrypoints/openai/common_api.py
// _build_model_card): the OpenAI model card with the served model's num_gpus, task_type and
// precisions.
func (h *Handler) modelCard() map[string]any {
	task := h.cfg.TaskType
	if task == "" {
		task = defaultTaskType
	}
	return map[string]any{
		"id": h.served(), "object": "model", "created": 0, "owned_by": "sglang",
		"root": h.served(), "parent": nil, "max_model_len": nil,
		"num_gpus": 1, "task_type": task, "dit_precision": ditPrecision, "vae_precision": vaePrecision,
		"pipeline_name": nil, "pipeline_class": nil,
	}
}

// models is GET /v1/models (common_api.py available_models): a list of the one served model.
func (h *Handler) models(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []map[string]any{h.modelCard()}})
}

// retrieveModel is GET /v1/models/{model} (common_api.py retrieve_model): the card of the
// served model, and 404 with OpenAI's model_not_found error for any other id; the
// models-any-id fault answers every id with the card.
func (h *Handler) retrieveModel(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("model")
	if id != h.served() && !h.cfg.Faults.ModelsAnyID {
		writeJSON(w, http.StatusNotFound, map[string]any{"error": map[string]any{
			"message": fmt.Sprintf("The model '%s' does not exist", id),
			"type":    "invalid_request_error", "param": "model", "code": "model_not_found",
		}})
		return
	}
	writeJSON(w, http.StatusOK, h.modelCard())
}

// acceptsInputs is SGLang's check of a request's image input against the served task type
// (SamplingParams._validate_with_pipeline_config, configs/sample/sampling_params.py): a model
// whose task type takes no image refuses an input_reference with a ValueError, which
// video_api.py create_video answers 400 {"detail": "input_reference is not supported for T2V
// models."}. With no task type set the reference model takes every input; the
// t2v-takes-reference fault takes it anyway.
func (h *Handler) acceptsInputs(g *genRequest) error {
	task := h.cfg.TaskType
	if task == "" || g.inputHash == nil || slices.Contains(taskTakesImage, task) || h.cfg.Faults.T2VTakesRef {
		return nil
	}
	return badRequest{fmt.Sprintf("input_reference is not supported for %s models.", task)}
}

// revisedPrompt is an image's revised_prompt: SGLang's image API echoes the request's prompt
// (image_api.py, ImageResponseData(revised_prompt=prompt)); a thinking model (BAGEL with
// max_think_tokens > 0) answers the prompt, a newline and its plan, which SGLang's
// run_revised_prompt_check requires (test_server_utils.py get_generate_fn, as its unit tests
// state the rules). The revised-prompt-echo fault echoes the prompt even then: the fallback
// that check exists to catch.
func (h *Handler) revisedPrompt(g *genRequest) string {
	if !g.thinks || h.cfg.Faults.RevisedPromptEcho {
		return g.prompt
	}
	return g.prompt + "\n<think>Place the subject in the centre, plainly lit.</think>"
}
