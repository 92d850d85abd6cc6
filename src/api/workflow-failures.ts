/**
 * The API side of the failure boundary: the routes read a failed workflow's typed failure back
 * into the service error it stands for. The mapping lives with the services
 * (src/shared/workflow-failures.ts), which wait on workflows too.
 */
export { causeChain, serviceErrorOfWorkflowFailure, workflowCallError } from '../shared/workflow-failures';
