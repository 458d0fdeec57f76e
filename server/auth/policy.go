package auth

import (
	"slices"

	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"
)

// The roles. Admin may call every method; the others what Policy gives them.
const (
	RoleReader    = "reader"
	RoleStarter   = "starter"
	RoleSender    = "sender"
	RoleOperator  = "operator"
	RolePublisher = "publisher"
	RoleTasks     = "tasks"
	RoleWorker    = "worker"
	RoleAdmin     = "admin"
)

// policy is the method → roles table (README "Authentication and roles"
// shows the same table). A method missing here is for admin only.
var policy = map[string][]string{
	wfdv1connect.WorkflowServiceListWorkflowsProcedure:         {RoleReader},
	wfdv1connect.WorkflowServiceGetHandlerProcedure:            {RoleReader},
	wfdv1connect.WorkflowServiceListHandlersProcedure:          {RoleReader},
	wfdv1connect.WorkflowServiceStreamEventsProcedure:          {RoleReader},
	wfdv1connect.WorkflowServiceWaitHandlerProcedure:           {RoleReader},
	wfdv1connect.WorkflowServiceListReplicasProcedure:          {RoleReader},
	wfdv1connect.WorkflowServiceListPublishedEventsProcedure:   {RoleReader, RolePublisher},
	wfdv1connect.WorkflowServiceDeleteHandlerProcedure:         {RoleOperator},
	wfdv1connect.WorkflowServiceListTasksProcedure:             {RoleReader, RoleTasks},
	wfdv1connect.WorkflowServiceGetTaskProcedure:               {RoleReader, RoleTasks},
	wfdv1connect.WorkflowServiceRunWorkflowProcedure:           {RoleStarter},
	wfdv1connect.WorkflowServiceSendEventProcedure:             {RoleSender},
	wfdv1connect.WorkflowServiceCancelHandlerProcedure:         {RoleOperator},
	wfdv1connect.WorkflowServiceReleaseHandlerProcedure:        {RoleOperator},
	wfdv1connect.WorkflowServiceGetStatsProcedure:              {RoleOperator},
	wfdv1connect.WorkflowServiceUpgradeHandlersProcedure:       {RoleOperator},
	wfdv1connect.WorkflowServiceSetCurrentVersionProcedure:     {RoleOperator},
	wfdv1connect.WorkflowServiceDeleteWorkflowVersionProcedure: {RoleOperator},
	wfdv1connect.WorkerServiceListWorkersProcedure:             {RoleOperator},
	wfdv1connect.WorkflowServiceGetScheduleProcedure:           {RoleReader},
	wfdv1connect.WorkflowServiceListSchedulesProcedure:         {RoleReader},
	wfdv1connect.WorkflowServiceCreateScheduleProcedure:        {RoleOperator},
	wfdv1connect.WorkflowServiceUpdateScheduleProcedure:        {RoleOperator},
	wfdv1connect.WorkflowServiceDeleteScheduleProcedure:        {RoleOperator},
	wfdv1connect.WorkflowServiceTriggerScheduleProcedure:       {RoleOperator},
	wfdv1connect.WorkflowServicePublishEventProcedure:          {RolePublisher},
	wfdv1connect.WorkflowServiceCompleteTaskProcedure:          {RoleTasks},
	wfdv1connect.WorkflowServiceCancelTaskProcedure:            {RoleTasks},
	wfdv1connect.WorkflowServiceClaimTaskProcedure:             {RoleTasks},
	wfdv1connect.WorkflowServiceUnclaimTaskProcedure:           {RoleTasks},
	wfdv1connect.WorkflowServiceReassignTaskProcedure:          {RoleTasks},
	wfdv1connect.WorkflowServiceCommentTaskProcedure:           {RoleTasks},
	wfdv1connect.WorkerServiceConnectProcedure:                 {RoleWorker},
	wfdv1connect.WorkerServiceStepCallProcedure:                {RoleWorker},
	wfdv1connect.WorkerServiceFinishRunProcedure:               {RoleWorker},
	wfdv1connect.WorkerServiceFinishRunsProcedure:              {RoleWorker},
}

// anyCaller holds the methods every authenticated caller may call,
// whatever its roles: asking who one is, and where one may call.
var anyCaller = map[string]bool{
	wfdv1connect.WorkflowServiceGetIdentityProcedure:    true,
	wfdv1connect.WorkflowServiceListNamespacesProcedure: true,
}

// Allowed reports whether id may call procedure ("/wfd.v1.WorkflowService/RunWorkflow").
func Allowed(id Identity, procedure string) bool {
	if id.HasRole(RoleAdmin) || anyCaller[procedure] {
		return true
	}
	return slices.ContainsFunc(policy[procedure], id.HasRole)
}

// RolesFor returns the roles, besides admin, that may call procedure.
func RolesFor(procedure string) []string { return slices.Clone(policy[procedure]) }

// MayOverrideAssignee reports whether id may complete a task assigned to
// someone else: admin and operator.
func MayOverrideAssignee(id Identity) bool {
	return id.HasRole(RoleAdmin) || id.HasRole(RoleOperator)
}
